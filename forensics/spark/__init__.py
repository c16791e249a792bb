"""The analyzers and named queries on Apache Spark over the Parquet lake of `forensics export` (docs/scale.md#spark-the-analyzers-and-the-named-queries-tested).

``pip install 'forensics[spark]'`` and a Java runtime; local mode (``local[*]``) by default, a cluster with
``--spark-master``. ``report`` runs the per-conversation analyzers (``forensics.spark.report``), ``sql`` the named
queries translated to Spark's dialect. How to run it on a cluster: docs/scale.md.
"""
