"""``InstrumentsToolkit``: every validated clinical scoring instrument as a THINK tool."""

from __future__ import annotations

from clinical_gym.tools.instruments import (
    apache,
    cardiology,
    critical_care,
    gastroenterology,
    hepatology,
    infections,
    neurology,
    obstetrics,
    psychiatry,
    thromboembolism,
)
from clinical_gym.tools.toolkit import Toolkit


class InstrumentsToolkit(Toolkit):
    """Clinical scoring instruments (calculators): each tool returns the score, its risk category, what it means,
    and the points per item, as JSON. Any domain can mount it (``domain_tools + InstrumentsToolkit()``)."""

    curb_65 = staticmethod(infections.curb_65)
    centor_mcisaac = staticmethod(infections.centor_mcisaac)
    qsofa = staticmethod(critical_care.qsofa)
    sofa = staticmethod(critical_care.sofa)
    news2 = staticmethod(critical_care.news2)
    apache_ii = staticmethod(apache.apache_ii)
    glasgow_coma_scale = staticmethod(neurology.glasgow_coma_scale)
    abcd2 = staticmethod(neurology.abcd2)
    wells_dvt = staticmethod(thromboembolism.wells_dvt)
    wells_pe = staticmethod(thromboembolism.wells_pe)
    perc_rule = staticmethod(thromboembolism.perc_rule)
    heart_score = staticmethod(cardiology.heart_score)
    timi_ua_nstemi = staticmethod(cardiology.timi_ua_nstemi)
    cha2ds2_vasc = staticmethod(cardiology.cha2ds2_vasc)
    has_bled = staticmethod(cardiology.has_bled)
    meld_na = staticmethod(hepatology.meld_na)
    child_pugh = staticmethod(hepatology.child_pugh)
    alvarado = staticmethod(gastroenterology.alvarado)
    glasgow_blatchford = staticmethod(gastroenterology.glasgow_blatchford)
    phq_9 = staticmethod(psychiatry.phq_9)
    gad_7 = staticmethod(psychiatry.gad_7)
    audit_c = staticmethod(psychiatry.audit_c)
    ciwa_ar = staticmethod(psychiatry.ciwa_ar)
    bishop_score = staticmethod(obstetrics.bishop_score)
    apgar = staticmethod(obstetrics.apgar)
