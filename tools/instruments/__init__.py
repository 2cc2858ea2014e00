"""Validated clinical scoring instruments: pure functions (one module per clinical family) that check their inputs'
types and ranges and return an ``InstrumentResult``, all mounted as THINK tools on ``InstrumentsToolkit``."""

from clinical_gym.tools.instruments.apache import apache_ii
from clinical_gym.tools.instruments.base import InstrumentResult
from clinical_gym.tools.instruments.cardiology import cha2ds2_vasc, has_bled, heart_score, timi_ua_nstemi
from clinical_gym.tools.instruments.critical_care import news2, qsofa, sofa
from clinical_gym.tools.instruments.gastroenterology import alvarado, glasgow_blatchford
from clinical_gym.tools.instruments.hepatology import child_pugh, meld_na
from clinical_gym.tools.instruments.infections import centor_mcisaac, curb_65
from clinical_gym.tools.instruments.neurology import abcd2, glasgow_coma_scale
from clinical_gym.tools.instruments.obstetrics import apgar, bishop_score
from clinical_gym.tools.instruments.psychiatry import audit_c, ciwa_ar, gad_7, phq_9
from clinical_gym.tools.instruments.thromboembolism import perc_rule, wells_dvt, wells_pe
from clinical_gym.tools.instruments.toolkit import InstrumentsToolkit

__all__ = [
    "InstrumentResult", "InstrumentsToolkit", "abcd2", "alvarado", "apache_ii", "apgar", "audit_c", "bishop_score",
    "centor_mcisaac", "cha2ds2_vasc", "child_pugh", "ciwa_ar", "curb_65", "gad_7", "glasgow_blatchford",
    "glasgow_coma_scale", "has_bled", "heart_score", "meld_na", "news2", "perc_rule", "phq_9", "qsofa", "sofa",
    "timi_ua_nstemi", "wells_dvt", "wells_pe",
]
