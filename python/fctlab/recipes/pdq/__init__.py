"""Recipe ``pdq``: the PDQ paper's evaluation. :mod:`.recipe` holds Figures 3, 4, 6, 7, 9 and 10 and the recipe
itself, :mod:`.scale` Figure 8 (network scale, at the flow and the packet level), and :mod:`.series` what both
share (the series, the tree's constants, reading the runs back). Nothing is imported here, so that the scale study
can be imported without the rest."""
