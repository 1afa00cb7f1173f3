"""One run's numbers, from what read/ gives: analyse (a run's inputs -> the run model),
aggregate (histograms -> load-curve rows and series), overload (a cell's verdict), gc_tail (GC
pauses against the tail), summary_load (a scenario's summary load point), flame_profiles (a
cell's JFR stacks summed), jvm_summary (a JFR recording's figures), jmh_report (a JMH run laid
out), imported (other tools' results)."""
