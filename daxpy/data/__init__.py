"""Data model: datasets, fields, cell types, arrays, expressions, decompositions and the worklet registry."""
