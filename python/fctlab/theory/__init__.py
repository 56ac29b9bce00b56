"""Closed-form and exact references that need no simulation: HyLine's threshold band
(:mod:`fctlab.theory.hyline_band`) and the PDQ paper's optimal single-bottleneck schedules
(:mod:`fctlab.theory.pdq_optimum`)."""
