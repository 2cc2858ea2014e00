"""Environment families and clinical domains; each sub-package registers through clinical_gym.registration."""
