"""The modules PyTorch defines its classes in, as programs import them: `from torch.nn.modules.linear import
Linear`, `torch.nn.parameter.Parameter`, `torch.nn.parallel.DataParallel`, `torch.utils.data.dataset.Dataset`.

Each path is a `Namespace` of the same objects `torch.nn` and `torch.utils.data` hold (one class, two names, as
in PyTorch); the table lists only classes gradcli has, so a path shows what can be imported from it.
"""
from __future__ import annotations

from gradcli.lang.namespace import Namespace

NN_MODULE_FILES: dict[str, tuple[str, ...]] = {
    "activation": ("CELU", "ELU", "GELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh", "LeakyReLU",
                   "LogSigmoid", "LogSoftmax", "Mish", "MultiheadAttention", "PReLU", "ReLU", "ReLU6", "SELU", "SiLU",
                   "Sigmoid", "Softmax", "Softmin", "Softplus", "Softshrink", "Softsign", "Tanh", "Tanhshrink",
                   "Threshold"),
    "batchnorm": ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d"),
    "container": ("ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"),
    "conv": ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "LazyConv1d",
             "LazyConv2d", "LazyConv3d"),
    "distance": ("CosineSimilarity", "PairwiseDistance"),
    "dropout": ("Dropout", "Dropout2d"),
    "flatten": ("Flatten", "Unflatten"),
    "fold": ("Fold", "Unfold"),
    "instancenorm": ("InstanceNorm1d", "InstanceNorm2d"),
    "linear": ("Identity", "LazyLinear", "Linear"),
    "loss": ("BCELoss", "BCEWithLogitsLoss", "CTCLoss", "CosineEmbeddingLoss", "CrossEntropyLoss", "GaussianNLLLoss",
             "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "L1Loss", "MSELoss", "MarginRankingLoss",
             "MultiLabelSoftMarginLoss", "MultiMarginLoss", "NLLLoss", "PoissonNLLLoss", "SmoothL1Loss",
             "SoftMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss"),
    "module": ("Module",),
    "normalization": ("GroupNorm", "LayerNorm", "RMSNorm"),
    "padding": ("ConstantPad1d", "ConstantPad2d", "ZeroPad1d", "ZeroPad2d"),
    "pixelshuffle": ("PixelShuffle", "PixelUnshuffle"),
    "pooling": ("AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool2d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
                "MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d"),
    "rnn": ("GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNCell"),
    "sparse": ("Embedding",),
    "transformer": ("Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
                    "TransformerEncoderLayer"),
    "upsampling": ("Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"),
}
"""torch.nn.modules.FILE: the classes PyTorch 2.13 defines in each file of torch/nn/modules that gradcli has."""


def paths(nn: Namespace, data: Namespace) -> dict[str, Namespace]:
    """Every path above as a Namespace, keyed by its dotted name, each also reachable from its parent."""
    files = {f"torch.nn.modules.{file}": Namespace(f"torch.nn.modules.{file}", {name: nn.members[name] for name in names})
             for file, names in NN_MODULE_FILES.items()}
    modules = Namespace("torch.nn.modules", {**{path.rsplit(".", 1)[1]: space for path, space in files.items()},
                                             **{name: nn.members[name] for names in NN_MODULE_FILES.values()
                                                for name in names}})
    parameter = Namespace("torch.nn.parameter", {name: nn.members[name] for name in ("Parameter",
                                                                                      "UninitializedParameter")})
    parallel = Namespace("torch.nn.parallel", {"DataParallel": nn.members["DataParallel"]})
    dataset = Namespace("torch.utils.data.dataset", {name: data.members[name] for name in (
        "Dataset", "IterableDataset", "TensorDataset", "Subset", "random_split")})
    dataloader = Namespace("torch.utils.data.dataloader", {name: data.members[name] for name in (
        "DataLoader", "default_collate")})
    nn.members.update({"modules": modules, "parameter": parameter, "parallel": parallel})
    data.members.update({"dataset": dataset, "dataloader": dataloader})
    return {"torch.nn.modules": modules, **files, "torch.nn.parameter": parameter, "torch.nn.parallel": parallel,
            "torch.utils.data.dataset": dataset, "torch.utils.data.dataloader": dataloader}
