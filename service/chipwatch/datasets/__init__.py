"""Public datasets read into plain records: Epoch AI hardware, clusters and funding rounds; MLPerf
Inference summaries, system descriptions and log summaries; InferenceX evals and benchmark_serving runs.

Every module here is pure: bytes or text in, records out, no database, network, files or clock.
Bad rows come back as (row number, reason); a file of the wrong kind raises DatasetFormatError.
"""
