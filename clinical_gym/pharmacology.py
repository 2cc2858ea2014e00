"""A compact adult drug reference written for this project: classes and properties (tags), allergy groups and their
cross-reactivity, maximum daily doses, renal limits, pregnancy contraindications, and pairwise interactions.

It serves the safety detectors (``clinical_gym.rewards.safety``) and any domain's drug tools. It is a teaching
reference for simulated patients, not a prescribing source: dose limits are the highest adult daily doses in
accepted use by any route or indication (so that flagging one marks a clearly dangerous dose), and are left out
where dosing is by weight or level; renal limits use eGFR in mL/min/1.73 m².

Tags used by the detectors: ``nsaid``, ``antiplatelet``, ``anticoagulant``, ``thrombolytic``, ``opioid``,
``benzodiazepine``, ``z_drug``, ``cns_depressant``, ``antihypertensive``, ``negative_chronotrope``,
``beta_blocker``, ``ace_inhibitor``, ``arb``, ``diuretic``, ``potassium_raising``, ``potassium_supplement``,
``potassium_sparing``, ``hypoglycaemic``, ``long_acting_sulfonylurea``, ``thiazolidinedione``, ``ccb_non_dhp``,
``qt_prolonging``, ``serotonergic``, ``ssri``, ``snri``, ``tca``, ``maoi``, ``triptan``, ``fluoroquinolone``,
``tetracycline``, ``dopamine_antagonist`` (centrally acting), ``antipsychotic``, ``anticholinergic``,
``seizure_threshold``, ``combined_hormonal_contraceptive``, ``digoxin``, ``methotrexate``, ``antibiotic``,
``iodinated_contrast``, ``ergot_uterotonic``, ``prostaglandin_f2a``, ``magnesium``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType
from typing import Literal

from clinical_gym.cases.schema import normalize

InteractionSeverity = Literal["contraindicated", "major", "moderate"]
AllergyConflict = Literal["same", "cross"]
_SEVERITY_ORDER = {"moderate": 1, "major": 2, "contraindicated": 3}


@dataclass(frozen=True)
class Drug:
    """One drug: canonical name, other names, tags (classes and properties), allergy group and limits."""

    name: str
    tags: frozenset[str]
    aliases: tuple[str, ...] = ()
    allergy_group: str | None = None
    max_daily_mg: float | None = None
    avoid_egfr_below: float | None = None
    severe_renal_max_daily_mg: float | None = None  # maximum daily dose when eGFR < 30
    pregnancy_contraindicated: bool = False

    def has(self, *tags: str) -> bool:
        """Whether the drug carries any of ``tags`` (a tag may also be the drug's own name)."""
        return any(t in self.tags or t == self.name for t in tags)


@dataclass(frozen=True)
class Interaction:
    """What happens when two drugs are combined, and how serious it is."""

    severity: InteractionSeverity
    mechanism: str
    drugs: tuple[str, str] = field(default=("", ""))


def _drug(name: str, tags: str, *aliases: str, group: str | None = None, max_mg: float | None = None,
          avoid_egfr: float | None = None, renal_max: float | None = None, pregnancy_x: bool = False) -> Drug:
    return Drug(name=name, tags=frozenset(tags.split()), aliases=aliases, allergy_group=group, max_daily_mg=max_mg,
                avoid_egfr_below=avoid_egfr, severe_renal_max_daily_mg=renal_max, pregnancy_contraindicated=pregnancy_x)


_DRUGS: tuple[Drug, ...] = (
    # antibacterials
    _drug("amoxicillin", "antibiotic penicillin", "amoxycillin", group="penicillins", max_mg=12000),
    _drug("co-amoxiclav", "antibiotic penicillin", "amoxicillin-clavulanate", "amoxicillin clavulanic acid",
          group="penicillins"),
    _drug("phenoxymethylpenicillin", "antibiotic penicillin", "penicillin v", group="penicillins", max_mg=4000),
    _drug("benzylpenicillin", "antibiotic penicillin", "penicillin g", group="penicillins"),
    _drug("flucloxacillin", "antibiotic penicillin", group="penicillins", max_mg=12000),
    _drug("piperacillin-tazobactam", "antibiotic penicillin", "piperacillin tazobactam", group="penicillins"),
    _drug("cefalexin", "antibiotic cephalosporin", "cephalexin", group="cephalosporins", max_mg=6000),
    _drug("cefuroxime", "antibiotic cephalosporin", group="cephalosporins", max_mg=6000),
    _drug("ceftriaxone", "antibiotic cephalosporin", group="cephalosporins", max_mg=4000),
    _drug("meropenem", "antibiotic carbapenem", group="carbapenems", max_mg=6000),
    _drug("clarithromycin", "antibiotic macrolide qt_prolonging strong_cyp3a4_inhibitor warfarin_potentiator",
          group="macrolides", max_mg=1000),
    _drug("erythromycin", "antibiotic macrolide qt_prolonging strong_cyp3a4_inhibitor warfarin_potentiator",
          group="macrolides", max_mg=4000),
    _drug("azithromycin", "antibiotic macrolide qt_prolonging", group="macrolides", max_mg=2000),
    _drug("doxycycline", "antibiotic tetracycline", group="tetracyclines", max_mg=200),
    _drug("ciprofloxacin", "antibiotic fluoroquinolone qt_prolonging warfarin_potentiator", group="fluoroquinolones",
          max_mg=1500),
    _drug("levofloxacin", "antibiotic fluoroquinolone qt_prolonging", group="fluoroquinolones", max_mg=1000),
    _drug("trimethoprim", "antibiotic folate_antagonist potassium_raising", max_mg=400),
    _drug("co-trimoxazole", "antibiotic folate_antagonist potassium_raising warfarin_potentiator",
          "trimethoprim-sulfamethoxazole", "sulfamethoxazole-trimethoprim", "tmp-smx", group="sulfonamide antibiotics"),
    _drug("nitrofurantoin", "antibiotic", max_mg=400, avoid_egfr=30),
    _drug("fosfomycin", "antibiotic"),
    _drug("metronidazole", "antibiotic warfarin_potentiator", max_mg=4000),
    _drug("gentamicin", "antibiotic aminoglycoside nephrotoxic"),
    _drug("vancomycin", "antibiotic glycopeptide nephrotoxic"),
    _drug("linezolid", "antibiotic serotonergic maoi_like"),
    _drug("rifampicin", "antibiotic enzyme_inducer", "rifampin", max_mg=1200),
    # antivirals and antifungals
    _drug("aciclovir", "antiviral", "acyclovir", max_mg=4000, renal_max=2400),
    _drug("oseltamivir", "antiviral", max_mg=150),
    _drug("fluconazole", "antifungal qt_prolonging warfarin_potentiator"),
    _drug("itraconazole", "antifungal strong_cyp3a4_inhibitor"),
    # analgesics
    _drug("paracetamol", "analgesic", "acetaminophen", max_mg=4000),
    _drug("ibuprofen", "nsaid analgesic", group="nsaids", max_mg=3200, avoid_egfr=30),
    _drug("naproxen", "nsaid analgesic", group="nsaids", max_mg=1500, avoid_egfr=30),
    _drug("diclofenac", "nsaid analgesic", group="nsaids", max_mg=150, avoid_egfr=30),
    _drug("aspirin", "nsaid antiplatelet analgesic", "acetylsalicylic acid", group="nsaids", max_mg=4000),
    _drug("codeine", "opioid cns_depressant analgesic", "codeine phosphate", group="opioids", max_mg=240),
    _drug("tramadol", "opioid cns_depressant serotonergic seizure_threshold analgesic", max_mg=400),
    _drug("morphine", "opioid cns_depressant analgesic", "morphine sulfate", group="opioids"),
    _drug("oxycodone", "opioid cns_depressant analgesic", group="opioids"),
    # cardiovascular
    _drug("ramipril", "ace_inhibitor antihypertensive potassium_raising", group="ace inhibitors", max_mg=10,
          pregnancy_x=True),
    _drug("lisinopril", "ace_inhibitor antihypertensive potassium_raising", group="ace inhibitors", max_mg=80,
          pregnancy_x=True),
    _drug("enalapril", "ace_inhibitor antihypertensive potassium_raising", group="ace inhibitors", max_mg=40,
          pregnancy_x=True),
    _drug("perindopril", "ace_inhibitor antihypertensive potassium_raising", group="ace inhibitors", max_mg=10,
          pregnancy_x=True),
    _drug("losartan", "arb antihypertensive potassium_raising", max_mg=150, pregnancy_x=True),
    _drug("candesartan", "arb antihypertensive potassium_raising", max_mg=32, pregnancy_x=True),
    _drug("amlodipine", "ccb_dhp antihypertensive", max_mg=10),
    _drug("nifedipine", "ccb_dhp antihypertensive"),
    _drug("diltiazem", "ccb_non_dhp antihypertensive negative_chronotrope", max_mg=480),
    _drug("verapamil", "ccb_non_dhp antihypertensive negative_chronotrope", max_mg=480),
    _drug("atenolol", "beta_blocker antihypertensive negative_chronotrope", max_mg=100),
    _drug("bisoprolol", "beta_blocker antihypertensive negative_chronotrope", max_mg=20),
    _drug("metoprolol", "beta_blocker antihypertensive negative_chronotrope", max_mg=400),
    _drug("propranolol", "beta_blocker antihypertensive negative_chronotrope"),
    _drug("labetalol", "beta_blocker antihypertensive negative_chronotrope", max_mg=2400),
    _drug("carvedilol", "beta_blocker antihypertensive negative_chronotrope"),
    _drug("furosemide", "diuretic loop_diuretic antihypertensive", "frusemide"),
    _drug("bendroflumethiazide", "diuretic thiazide antihypertensive", "bendrofluazide"),
    _drug("indapamide", "diuretic thiazide antihypertensive", max_mg=2.5),
    _drug("hydrochlorothiazide", "diuretic thiazide antihypertensive"),
    _drug("spironolactone", "diuretic potassium_sparing potassium_raising antihypertensive", max_mg=400,
          avoid_egfr=30),
    _drug("glyceryl trinitrate", "nitrate antihypertensive", "gtn", "nitroglycerin"),
    _drug("isosorbide mononitrate", "nitrate antihypertensive"),
    _drug("sildenafil", "pde5_inhibitor", max_mg=100),
    _drug("tadalafil", "pde5_inhibitor", max_mg=40),
    _drug("digoxin", "digoxin negative_chronotrope"),
    _drug("amiodarone", "antiarrhythmic qt_prolonging warfarin_potentiator"),
    _drug("atorvastatin", "statin", max_mg=80, pregnancy_x=True),
    _drug("simvastatin", "statin", max_mg=80, pregnancy_x=True),
    _drug("rosuvastatin", "statin", max_mg=40, pregnancy_x=True),
    _drug("warfarin", "anticoagulant vitamin_k_antagonist", pregnancy_x=True),
    _drug("apixaban", "anticoagulant doac", max_mg=20, avoid_egfr=15),
    _drug("rivaroxaban", "anticoagulant doac", max_mg=30, avoid_egfr=15),
    _drug("dabigatran", "anticoagulant doac", max_mg=300, avoid_egfr=30),
    _drug("enoxaparin", "anticoagulant heparin"),
    _drug("heparin", "anticoagulant heparin", "unfractionated heparin"),
    _drug("clopidogrel", "antiplatelet", max_mg=600),
    _drug("ticagrelor", "antiplatelet", max_mg=180),
    _drug("alteplase", "thrombolytic", max_mg=90),
    _drug("tenecteplase", "thrombolytic", max_mg=50),
    # diabetes and endocrine
    _drug("metformin", "biguanide antidiabetic", max_mg=3000, avoid_egfr=30),
    _drug("gliclazide", "sulfonylurea hypoglycaemic antidiabetic", max_mg=320),
    _drug("glibenclamide", "sulfonylurea hypoglycaemic long_acting_sulfonylurea antidiabetic", "glyburide", max_mg=20,
          avoid_egfr=30),
    _drug("glipizide", "sulfonylurea hypoglycaemic antidiabetic", max_mg=40),
    _drug("insulin", "insulin hypoglycaemic antidiabetic", "insulin glargine", "insulin aspart", "soluble insulin",
          "insulin lispro", "isophane insulin"),
    _drug("pioglitazone", "thiazolidinedione antidiabetic", max_mg=45),
    _drug("linagliptin", "dpp4_inhibitor antidiabetic", max_mg=5),
    _drug("sitagliptin", "dpp4_inhibitor antidiabetic", max_mg=100, renal_max=25),
    _drug("empagliflozin", "sglt2_inhibitor antidiabetic", max_mg=25),
    _drug("dapagliflozin", "sglt2_inhibitor antidiabetic", max_mg=10),
    _drug("levothyroxine", "thyroid_hormone", "thyroxine"),
    _drug("carbimazole", "antithyroid", max_mg=60),
    _drug("methimazole", "antithyroid", "thiamazole", max_mg=60),
    _drug("propylthiouracil", "antithyroid"),
    _drug("prednisolone", "corticosteroid"),
    _drug("prednisone", "corticosteroid"),
    _drug("hydrocortisone", "corticosteroid"),
    _drug("methylprednisolone", "corticosteroid"),
    _drug("dexamethasone", "corticosteroid"),
    # psychiatry and neurology
    _drug("sertraline", "ssri serotonergic", max_mg=200),
    _drug("fluoxetine", "ssri serotonergic", max_mg=80),
    _drug("citalopram", "ssri serotonergic qt_prolonging", max_mg=40),
    _drug("escitalopram", "ssri serotonergic qt_prolonging", max_mg=20),
    _drug("venlafaxine", "snri serotonergic", max_mg=375),
    _drug("mirtazapine", "antidepressant", max_mg=45),
    _drug("amitriptyline", "tca serotonergic anticholinergic qt_prolonging", max_mg=300),
    _drug("phenelzine", "maoi serotonergic", max_mg=90),
    _drug("moclobemide", "maoi serotonergic", max_mg=600),
    _drug("lithium", "lithium", "lithium carbonate", avoid_egfr=30),
    _drug("haloperidol", "antipsychotic dopamine_antagonist qt_prolonging"),
    _drug("risperidone", "antipsychotic dopamine_antagonist"),
    _drug("olanzapine", "antipsychotic dopamine_antagonist anticholinergic"),
    _drug("quetiapine", "antipsychotic"),
    _drug("diazepam", "benzodiazepine cns_depressant"),
    _drug("lorazepam", "benzodiazepine cns_depressant"),
    _drug("zopiclone", "z_drug cns_depressant", max_mg=7.5),
    _drug("valproate", "antiepileptic", "sodium valproate", "valproic acid", max_mg=2500, pregnancy_x=True),
    _drug("carbamazepine", "antiepileptic enzyme_inducer", max_mg=2000),
    _drug("levetiracetam", "antiepileptic", max_mg=3000, renal_max=1000),
    _drug("phenytoin", "antiepileptic enzyme_inducer"),
    _drug("lamotrigine", "antiepileptic"),
    _drug("gabapentin", "gabapentinoid cns_depressant", max_mg=3600, renal_max=700),
    _drug("pregabalin", "gabapentinoid cns_depressant", max_mg=600, renal_max=150),
    _drug("bupropion", "antidepressant seizure_threshold", max_mg=450),
    _drug("sumatriptan", "triptan serotonergic", max_mg=300),
    _drug("tizanidine", "muscle_relaxant"),
    # psychiatry: antipsychotics, antidepressants, anxiolytics, addiction treatments, antidotes (Psychiatry-v0)
    _drug("clozapine", "antipsychotic anticholinergic seizure_threshold", max_mg=900),
    _drug("aripiprazole", "antipsychotic", max_mg=30),
    _drug("paroxetine", "ssri serotonergic anticholinergic", max_mg=60),
    _drug("duloxetine", "snri serotonergic", max_mg=120),
    _drug("trazodone", "antidepressant serotonergic", max_mg=600),
    _drug("tranylcypromine", "maoi serotonergic", max_mg=60),
    _drug("clomipramine", "tca serotonergic anticholinergic qt_prolonging", max_mg=250),
    _drug("clonazepam", "benzodiazepine cns_depressant", max_mg=20),
    _drug("chlordiazepoxide", "benzodiazepine cns_depressant", max_mg=250),
    _drug("zolpidem", "z_drug cns_depressant", max_mg=10),
    _drug("methadone", "opioid cns_depressant qt_prolonging", group="opioids"),
    _drug("buprenorphine", "opioid cns_depressant", group="opioids"),
    _drug("naltrexone", "opioid_receptor_antagonist alcohol_relapse_prevention", max_mg=150),
    _drug("acamprosate", "alcohol_relapse_prevention", "acamprosate calcium", max_mg=1998, avoid_egfr=30),
    _drug("disulfiram", "alcohol_relapse_prevention"),
    _drug("procyclidine", "antimuscarinic anticholinergic", max_mg=60),
    _drug("thiamine", "vitamin_b1", "vitamin b1", "pabrinex"),
    _drug("acetylcysteine", "antidote", "n-acetylcysteine", "parvolex"),
    # antiemetics, antihistamines, gastrointestinal
    _drug("metoclopramide", "antiemetic dopamine_antagonist", max_mg=30),
    _drug("prochlorperazine", "antiemetic dopamine_antagonist"),
    _drug("domperidone", "antiemetic qt_prolonging", max_mg=30),
    _drug("ondansetron", "antiemetic qt_prolonging", max_mg=32),
    _drug("cyclizine", "antiemetic anticholinergic", max_mg=150),
    _drug("chlorphenamine", "antihistamine anticholinergic", "chlorpheniramine", max_mg=24),
    _drug("promethazine", "antihistamine anticholinergic antiemetic"),
    _drug("cetirizine", "antihistamine", max_mg=40),
    _drug("oxybutynin", "antimuscarinic anticholinergic", max_mg=20),
    _drug("omeprazole", "ppi"),
    _drug("lansoprazole", "ppi"),
    # respiratory and emergency
    _drug("salbutamol", "beta2_agonist", "albuterol"),
    _drug("ipratropium", "antimuscarinic_inhaled"),
    _drug("theophylline", "methylxanthine"),
    _drug("adrenaline", "sympathomimetic", "epinephrine"),
    _drug("naloxone", "opioid_antagonist"),
    _drug("calcium gluconate", "electrolyte"),
    _drug("phytomenadione", "vitamin_k", "vitamin k", "vitamin k1", "phytonadione"),
    _drug("prothrombin complex concentrate", "coagulation_factor", "pcc"),
    # rheumatology, immunology, other
    _drug("allopurinol", "xanthine_oxidase_inhibitor", max_mg=900),
    _drug("colchicine", "antigout", max_mg=3),
    _drug("methotrexate", "methotrexate immunosuppressant", pregnancy_x=True),
    _drug("azathioprine", "immunosuppressant thiopurine"),
    _drug("mycophenolate", "immunosuppressant", "mycophenolate mofetil", pregnancy_x=True),
    _drug("leflunomide", "immunosuppressant", pregnancy_x=True),
    _drug("isotretinoin", "retinoid", pregnancy_x=True),
    _drug("misoprostol", "prostaglandin", pregnancy_x=True),
    _drug("finasteride", "antiandrogen", pregnancy_x=True),
    _drug("combined oral contraceptive", "combined_hormonal_contraceptive estrogen",
          "combined oral contraceptive pill", "ethinylestradiol with levonorgestrel"),
    _drug("potassium chloride", "potassium_supplement potassium_raising", "oral potassium", "kcl"),
    _drug("ferrous sulfate", "iron", "ferrous sulphate", max_mg=600),
    _drug("hydroxocobalamin", "vitamin_b12", "vitamin b12"),
    _drug("iodinated contrast", "iodinated_contrast", "contrast medium"),
    # obstetrics: uterotonics, obstetric antihypertensives, magnesium, tocolysis, steroids, prophylaxis
    _drug("oxytocin", "uterotonic", "syntocinon", "pitocin"),
    _drug("methylergonovine", "uterotonic ergot_uterotonic", "methylergometrine", "methergine", max_mg=1.0,
          pregnancy_x=True),
    _drug("ergometrine", "uterotonic ergot_uterotonic", "ergonovine", max_mg=1.0, pregnancy_x=True),
    _drug("oxytocin-ergometrine", "uterotonic ergot_uterotonic", "syntometrine", "oxytocin with ergometrine",
          pregnancy_x=True),
    _drug("carboprost", "uterotonic prostaglandin_f2a", "carboprost tromethamine", "hemabate",
          "15-methyl prostaglandin f2 alpha", max_mg=2.0, pregnancy_x=True),
    _drug("dinoprostone", "prostaglandin_e2 cervical_ripening", "prostaglandin e2", "prostin", "propess",
          "cervidil"),
    _drug("tranexamic acid", "antifibrinolytic", "txa"),
    _drug("magnesium sulfate", "magnesium anticonvulsant", "magnesium sulphate", "mgso4"),
    _drug("hydralazine", "vasodilator antihypertensive"),
    _drug("methyldopa", "centrally_acting_antihypertensive antihypertensive", "alpha-methyldopa", max_mg=3000),
    _drug("terbutaline", "beta2_agonist tocolytic"),
    _drug("betamethasone", "corticosteroid"),
    _drug("anti-d immunoglobulin", "immunoglobulin", "anti-d", "rho(d) immune globulin", "rhogam"),
    _drug("cefazolin", "antibiotic cephalosporin", "cefazoline", group="cephalosporins", max_mg=12000),
    _drug("clindamycin", "antibiotic lincosamide"),
    _drug("ampicillin", "antibiotic penicillin", group="penicillins", max_mg=12000),
    _drug("folic acid", "vitamin", "folate"),
)

DRUGS: Mapping[str, Drug] = MappingProxyType({d.name: d for d in _DRUGS})

ALLERGY_GROUP_NAMES: Mapping[str, str] = MappingProxyType({
    "penicillin": "penicillins", "penicillins": "penicillins", "beta lactam": "penicillins",
    "cephalosporin": "cephalosporins", "cephalosporins": "cephalosporins",
    "carbapenem": "carbapenems", "carbapenems": "carbapenems",
    "macrolide": "macrolides", "macrolides": "macrolides",
    "tetracycline": "tetracyclines", "tetracyclines": "tetracyclines",
    "quinolone": "fluoroquinolones", "quinolones": "fluoroquinolones", "fluoroquinolone": "fluoroquinolones",
    "fluoroquinolones": "fluoroquinolones",
    "sulfa": "sulfonamide antibiotics", "sulfonamide": "sulfonamide antibiotics",
    "sulfonamides": "sulfonamide antibiotics", "sulphonamides": "sulfonamide antibiotics",
    "sulfonamide antibiotics": "sulfonamide antibiotics",
    "nsaid": "nsaids", "nsaids": "nsaids", "non steroidal anti inflammatory drugs": "nsaids",
    "opioid": "opioids", "opioids": "opioids", "opiates": "opioids",
    "ace inhibitor": "ace inhibitors", "ace inhibitors": "ace inhibitors",
})

# Groups that can cause a reaction in a patient allergic to the key group (clinically relevant cross-reactivity).
CROSS_REACTIVE: Mapping[str, frozenset[str]] = MappingProxyType({
    "penicillins": frozenset({"cephalosporins", "carbapenems"}),
    "cephalosporins": frozenset({"penicillins", "carbapenems"}),
    "carbapenems": frozenset({"penicillins", "cephalosporins"}),
})

# (name or tag, name or tag, severity, what happens). A pair matches either order; the most severe match wins.
_INTERACTIONS: tuple[tuple[str, str, InteractionSeverity, str], ...] = (
    ("nitrate", "pde5_inhibitor", "contraindicated", "profound, potentially fatal hypotension (additive nitric oxide "
                                                     "and cGMP-mediated vasodilation)"),
    ("maoi", "ssri", "contraindicated", "serotonin syndrome"),
    ("maoi", "snri", "contraindicated", "serotonin syndrome"),
    ("maoi", "tca", "contraindicated", "serotonin syndrome and hypertensive reactions"),
    ("maoi", "tramadol", "contraindicated", "serotonin syndrome and seizures"),
    ("maoi", "triptan", "contraindicated", "serotonin syndrome (MAO-A metabolises sumatriptan)"),
    ("simvastatin", "strong_cyp3a4_inhibitor", "contraindicated", "simvastatin levels rise many-fold (CYP3A4 "
                                                                  "inhibition): myopathy and rhabdomyolysis"),
    ("methotrexate", "folate_antagonist", "contraindicated", "additive antifolate effect and reduced methotrexate "
                                                             "clearance: bone-marrow suppression"),
    ("tizanidine", "ciprofloxacin", "contraindicated", "tizanidine levels rise about tenfold (CYP1A2 inhibition): "
                                                       "hypotension and sedation"),
    ("warfarin", "warfarin_potentiator", "major", "reduced warfarin metabolism: INR rise and bleeding"),
    ("warfarin", "enzyme_inducer", "major", "increased warfarin metabolism: INR falls, loss of anticoagulation"),
    ("doac", "enzyme_inducer", "major", "reduced anticoagulant levels (CYP3A4/P-gp induction): thrombosis"),
    ("anticoagulant", "nsaid", "major", "bleeding, especially gastrointestinal"),
    ("anticoagulant", "antiplatelet", "major", "additive bleeding risk"),
    ("anticoagulant", "thrombolytic", "major", "major bleeding, including intracranial"),
    ("opioid", "benzodiazepine", "major", "profound sedation and respiratory depression"),
    ("opioid", "gabapentinoid", "major", "respiratory depression"),
    ("opioid", "z_drug", "major", "profound sedation and respiratory depression"),
    ("ssri", "tramadol", "major", "serotonin syndrome and a lower seizure threshold"),
    ("snri", "tramadol", "major", "serotonin syndrome and a lower seizure threshold"),
    ("maoi_like", "ssri", "major", "serotonin syndrome (linezolid inhibits monoamine oxidase)"),
    ("maoi_like", "snri", "major", "serotonin syndrome (linezolid inhibits monoamine oxidase)"),
    ("lithium", "nsaid", "major", "reduced lithium excretion: lithium toxicity"),
    ("lithium", "ace_inhibitor", "major", "reduced lithium excretion: lithium toxicity"),
    ("lithium", "arb", "major", "reduced lithium excretion: lithium toxicity"),
    ("lithium", "thiazide", "major", "reduced lithium excretion: lithium toxicity"),
    ("digoxin", "amiodarone", "major", "digoxin levels roughly double: toxicity, bradycardia"),
    ("digoxin", "clarithromycin", "major", "P-glycoprotein inhibition raises digoxin levels: toxicity"),
    ("digoxin", "verapamil", "major", "raised digoxin levels and additive AV-node block"),
    ("beta_blocker", "verapamil", "major", "AV block, severe bradycardia and asystole"),
    ("potassium_supplement", "potassium_sparing", "major", "hyperkalaemia"),
    ("ace_inhibitor", "arb", "major", "dual renin-angiotensin blockade: hyperkalaemia, hypotension, acute kidney "
                                      "injury"),
    ("qt_prolonging", "qt_prolonging", "major", "additive QT prolongation: torsades de pointes"),
    ("azathioprine", "allopurinol", "major", "xanthine oxidase inhibition raises thiopurine levels: bone-marrow "
                                             "suppression"),
    ("colchicine", "strong_cyp3a4_inhibitor", "major", "colchicine toxicity (CYP3A4 and P-gp inhibition)"),
    ("ciprofloxacin", "theophylline", "major", "theophylline levels rise (CYP1A2 inhibition): seizures, arrhythmia"),
    ("amiodarone", "simvastatin", "major", "raised simvastatin levels: myopathy (do not exceed 20 mg daily)"),
    ("enzyme_inducer", "combined_hormonal_contraceptive", "major", "contraceptive failure (enzyme induction)"),
    ("potassium_sparing", "potassium_raising", "moderate", "hyperkalaemia: monitor potassium"),
    ("anticoagulant", "anticoagulant", "moderate", "duplicate anticoagulation: bleeding; intended only as bridging "
                                                   "(heparin cover while warfarin takes effect)"),
    ("ace_inhibitor", "potassium_supplement", "moderate", "hyperkalaemia: monitor potassium"),
    ("atorvastatin", "strong_cyp3a4_inhibitor", "moderate", "raised atorvastatin levels: myopathy risk"),
    ("ssri", "nsaid", "moderate", "gastrointestinal bleeding"),
    ("ssri", "anticoagulant", "moderate", "bleeding"),
    ("ssri", "triptan", "moderate", "serotonin syndrome (rare)"),
    ("nsaid", "ace_inhibitor", "moderate", "reduced renal function and antihypertensive effect"),
    ("nsaid", "arb", "moderate", "reduced renal function and antihypertensive effect"),
    ("nsaid", "corticosteroid", "moderate", "peptic ulceration and bleeding"),
    ("fluoroquinolone", "corticosteroid", "moderate", "tendinopathy and tendon rupture"),
    ("beta_blocker", "diltiazem", "moderate", "bradycardia and AV block"),
    ("clopidogrel", "omeprazole", "moderate", "reduced activation of clopidogrel (CYP2C19 inhibition)"),
    ("clozapine", "carbamazepine", "contraindicated", "additive risk of agranulocytosis; carbamazepine also lowers "
                                                      "clozapine levels"),
    ("clozapine", "ciprofloxacin", "major", "CYP1A2 inhibition raises clozapine levels: sedation, hypotension, "
                                           "seizures"),
    ("naltrexone", "opioid", "contraindicated", "opioid antagonist: precipitated withdrawal and loss of opioid "
                                                "analgesia"),
)


def _key(text: str) -> str:
    return normalize(text)


@lru_cache(maxsize=1)
def _names() -> dict[str, Drug]:
    index: dict[str, Drug] = {}
    for drug in _DRUGS:
        for name in (drug.name, *drug.aliases):
            index[_key(name)] = drug
    return index


@lru_cache(maxsize=4096)
def find_drug(name: str) -> Drug | None:
    """The drug ``name`` refers to (canonical name or alias, any case or punctuation; a trailing strength or form
    such as "amoxicillin 500 mg capsules" is ignored), or None."""
    words = _key(name).split()
    index = _names()
    for end in range(len(words), 0, -1):
        drug = index.get(" ".join(words[:end]))
        if drug is not None:
            return drug
    return None


@lru_cache(maxsize=1)
def _mention_pattern() -> re.Pattern[str]:
    names = sorted(_names(), key=len, reverse=True)
    return re.compile(r"\b(" + "|".join(re.escape(n) for n in names) + r")\b")


@lru_cache(maxsize=4096)
def drugs_mentioned(text: str) -> tuple[Drug, ...]:
    """The drugs named in ``text`` (whole words, any listed name), in order of first mention, without repeats."""
    found: dict[str, Drug] = {}
    for match in _mention_pattern().finditer(_key(text)):
        drug = _names()[match.group(1)]
        found.setdefault(drug.name, drug)
    return tuple(found.values())


def allergy_group(substance: str) -> str | None:
    """The allergy group a recorded allergen belongs to: a group name ("penicillin", "sulfa") or a drug's group."""
    key = _key(substance)
    if key in ALLERGY_GROUP_NAMES:
        return ALLERGY_GROUP_NAMES[key]
    drug = find_drug(substance)
    return drug.allergy_group if drug else None


def allergy_conflict(substance: str, drug: Drug) -> AllergyConflict | None:
    """How prescribing ``drug`` conflicts with an allergy to ``substance``: "same" (the drug itself or its allergy
    group), "cross" (a cross-reactive group), or None."""
    allergen = find_drug(substance)
    if allergen is not None and allergen.name == drug.name:
        return "same"
    group = allergy_group(substance)
    if group is None or drug.allergy_group is None:
        return None
    if group == drug.allergy_group:
        return "same"
    return "cross" if drug.allergy_group in CROSS_REACTIVE.get(group, frozenset()) else None


@lru_cache(maxsize=8192)
def interaction(a: Drug, b: Drug) -> Interaction | None:
    """The most severe listed interaction between two different drugs, or None."""
    if a.name == b.name:
        return None
    best: Interaction | None = None
    for x, y, severity, mechanism in _INTERACTIONS:
        if (a.has(x) and b.has(y)) or (a.has(y) and b.has(x)):
            if best is None or _SEVERITY_ORDER[severity] > _SEVERITY_ORDER[best.severity]:
                best = Interaction(severity, mechanism, (a.name, b.name))
    return best


def interactions_with(drug: Drug, others: Iterable[str]) -> list[Interaction]:
    """The interactions of ``drug`` with each of ``others`` (drug names; unknown names are skipped)."""
    found = []
    for name in others:
        other = find_drug(name)
        hit = interaction(drug, other) if other is not None else None
        if hit is not None:
            found.append(hit)
    return found
