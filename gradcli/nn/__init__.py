"""`torch.nn` as gradcli builds it: modules and layers, the functional ops, convolution and pooling,
initialisation and utilities. Built on the engine; the engine never imports it."""
