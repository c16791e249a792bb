"""The report layer: build (run the analyzers, the digest, the evidence), draw, render md/html/json, persist."""
