"""The gradcli language: program text in, checked syntax tree out, then interpreted onto tensors."""
