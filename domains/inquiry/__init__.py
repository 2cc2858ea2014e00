"""ClinicalInquiry: a doctor agent interviews a simulated patient (DoctorAgent-RL, Doctor-R1)."""
