"""Task formats other than own task folders: KernelBench checkouts and HF schema, Parquet, HF `datasets`."""
