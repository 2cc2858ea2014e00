"""Clinical images generated with known ground truth: 12-lead ECGs and rhythm strips, cardiotocographs,
spirometry flow-volume loops and audiograms, drawn offline with Pillow from signal models whose parameters are
the ground truth (``docs/visual.md`` shows a sample of each with what it shows).

Modules: ``canvas`` (millimetre paper), ``ecg_signal`` / ``ecg_rhythms`` / ``ecg_paper`` / ``ecg_reading`` (ECGs),
``ctg`` / ``ctg_reading`` (cardiotocographs), ``spirometry``, ``audiogram``. Importing this package imports nothing
heavy; the modules need numpy and Pillow (``pip install clinical-gym[vision]``).
"""
