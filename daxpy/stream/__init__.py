"""Streaming: host data through the GPU in overlapped chunks (chunk plans, staging, movers)."""
