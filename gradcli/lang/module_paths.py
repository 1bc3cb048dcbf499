"""The modules PyTorch defines its classes in, as programs import them: `from torch.nn.modules.linear import
Linear`, `torch.nn.parameter.Parameter`, `torch.nn.parallel.DataParallel`, `torch.utils.data.dataset.Dataset`.

Each path is a `Namespace` of the same objects `torch.nn` and `torch.utils.data` hold (one class, two names, as
in PyTorch); the table lists only classes gradcli has, so a path shows what can be imported from it.
"""
from __future__ import annotations

from typing import Callable

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
    "loss": (),  # every loss nn/losses.py declares, read when the path is first filled (`_names`)
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


NN_PATHS = ("torch.nn.modules", "torch.nn.parameter", "torch.nn.parallel")
DATA_PATHS = ("torch.utils.data.dataset", "torch.utils.data.dataloader")
"""The paths that are also members of their parent (`torch.nn.modules`, `torch.utils.data.dataset`)."""


_OTHER_FILES: dict[str, tuple[str, ...]] = {
    "parameter": ("Parameter", "UninitializedParameter"), "parallel": ("DataParallel",),
    "dataset": ("Dataset", "IterableDataset", "TensorDataset", "Subset", "random_split"),
    "dataloader": ("DataLoader", "default_collate")}


def _names(file: str) -> tuple[str, ...]:
    """A file's classes; the losses' are read from their declarations, so naming the path loads no nn."""
    if file == "loss":
        from gradcli.nn.losses import LOSSES
        return tuple(sorted(loss.module for loss in LOSSES))
    return NN_MODULE_FILES.get(file) or _OTHER_FILES[file]


def paths(nn: Namespace, data: Namespace) -> dict[str, Namespace]:
    """Every path above as a Namespace, keyed by its dotted name, each filled from `nn` or `data` when first read
    (so that naming them loads nothing); the parent adds those of NN_PATHS and DATA_PATHS when it fills."""
    def taken(space: Namespace, *files: str) -> Callable[[dict], None]:
        return lambda members: members.update({name: space.members[name] for file in files for name in _names(file)})

    files = {f"torch.nn.modules.{file}": Namespace(f"torch.nn.modules.{file}", {}, taken(nn, file))
             for file in NN_MODULE_FILES}
    modules = Namespace("torch.nn.modules", {path.rsplit(".", 1)[1]: space for path, space in files.items()},
                        taken(nn, *NN_MODULE_FILES))
    parameter = Namespace("torch.nn.parameter", {}, taken(nn, "parameter"))
    parallel = Namespace("torch.nn.parallel", {}, taken(nn, "parallel"))
    dataset = Namespace("torch.utils.data.dataset", {}, taken(data, "dataset"))
    dataloader = Namespace("torch.utils.data.dataloader", {}, taken(data, "dataloader"))
    return {"torch.nn.modules": modules, **files, "torch.nn.parameter": parameter, "torch.nn.parallel": parallel,
            "torch.utils.data.dataset": dataset, "torch.utils.data.dataloader": dataloader}

DISTRIBUTION_FILES: dict[str, tuple[str, ...]] = {
    "distribution": ("Distribution",), "exp_family": ("ExponentialFamily",), "normal": ("Normal",),
    "uniform": ("Uniform",), "laplace": ("Laplace",), "exponential": ("Exponential",), "bernoulli": ("Bernoulli",),
    "categorical": ("Categorical",),
    "one_hot_categorical": ("OneHotCategorical", "OneHotCategoricalStraightThrough"),
    "multinomial": ("Multinomial",), "gamma": ("Gamma",), "beta": ("Beta",), "dirichlet": ("Dirichlet",),
    "poisson": ("Poisson",), "multivariate_normal": ("MultivariateNormal",), "independent": ("Independent",),
    "transformed_distribution": ("TransformedDistribution",), "log_normal": ("LogNormal",), "gumbel": ("Gumbel",),
    "relaxed_bernoulli": ("LogitRelaxedBernoulli", "RelaxedBernoulli"),
    "relaxed_categorical": ("ExpRelaxedCategorical", "RelaxedOneHotCategorical"), "geometric": ("Geometric",),
    "binomial": ("Binomial",), "studentT": ("StudentT",), "chi2": ("Chi2",),
    "lowrank_multivariate_normal": ("LowRankMultivariateNormal",), "half_normal": ("HalfNormal",),
    "cauchy": ("Cauchy",), "half_cauchy": ("HalfCauchy",), "pareto": ("Pareto",), "weibull": ("Weibull",),
    "continuous_bernoulli": ("ContinuousBernoulli",), "kumaraswamy": ("Kumaraswamy",),
    "mixture_same_family": ("MixtureSameFamily",), "von_mises": ("VonMises",), "fishersnedecor": ("FisherSnedecor",),
    "logistic_normal": ("LogisticNormal",), "negative_binomial": ("NegativeBinomial",),
    "inverse_gamma": ("InverseGamma",), "generalized_pareto": ("GeneralizedPareto",),
    "lkj_cholesky": ("LKJCholesky",)}
"""`from torch.distributions.normal import Normal`: the distributions of each module PyTorch defines them in."""
