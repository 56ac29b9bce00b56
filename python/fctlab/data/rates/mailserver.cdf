# rates: data generation rate CDF, FileBench mail server, measured on a 1 Gbps testbed (hard disk back end)
# source: RAX paper (Wang et al., "RAX: Rate-Aware Flow Scheduling"), Fig. 2 "[Testbed] Measured generation
#   rate distributions"; the figure itself is not available, so this table is a reconstruction, not its data.
# what the paper's text gives: rates span 100 Mbps to 100 Gbps (1000x), because some data is cached in memory
#   and some read from disk or computed; the file server generates 1.4x faster than the mail server on average.
# assumptions made here: log-spaced points between 100 Mbps and 100 Gbps, linear interpolation between them
#   (fctlab's CDF sampling); most flows disk-bound (below ~1 Gbps: an HDD streams ~1 Gbps, less with several
#   threads), a tail of cached flows up to 100 Gbps; the mail server's mass shifted to lower rates so that the
#   means keep the paper's ratio: file server 3.09 Gbps, mail server 2.21 Gbps (ratio 1.40); HDFS TeraSort
#   (no statement in the text) between the two, mostly disk-bound at 0.3-1 Gbps.
# mean of this table: 2.206 Gbps; the paper's 10 Gbps simulation scales rates by 10 (workload.gen_rate_scale)
# columns: rate_bps cumulative_probability
100000000 0
200000000 0.12
400000000 0.4
700000000 0.64
1000000000 0.78
2000000000 0.86
5000000000 0.925
10000000000 0.97
40000000000 0.9907
100000000000 1
