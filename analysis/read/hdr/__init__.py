"""HdrHistogram, equal to its Java implementation (2.2.2), in the order a log is read:

lines.py       the `.hlog` line parser (header comments, tags, timestamps)
payload.py     the payload codec (base64, inflation, V0/V1/V2/DHIST headers, varints)
batch.py       the batch decoder (many payloads' counts into two flat arrays at once)
worker.py      when to read with a second core; a group's payloads packed (bodies joined)
log.py         `read_hlog` and `iter_batches`, the entry points
histogram.py   Histogram arithmetic and statistics; double.py the DoubleHistogram
distribution.py the `.hgrm` percentile distribution text
running.py     running percentiles after every interval (HistogramLogProcessor's totals)
native.py      compiled inner loops for batch.py and running.py (_native.c; else numpy)
processor.py   HistogramLogProcessor's two outputs (`python -m analysis hgrm`)
ahead.py       groups of lines read and decoded ahead by threads (hgrm's second core)
log_writer.py  intervals -> `.hlog` as HistogramLogWriter writes it (imported results)
"""
