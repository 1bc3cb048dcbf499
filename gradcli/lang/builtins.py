"""Every name a program can use: functions, `torch.`-style namespaces, tensor attributes and methods.

This is the language's allowlist. A name, attribute or method not listed here does not exist for
a program, whatever Python would allow. `gradcli ops` is generated from these tables and the op
table, so nothing here is written twice.
"""
from __future__ import annotations

import re

import builtins as py
import collections
import importlib
from typing import Any, Callable

import numpy as np

import gradcli.engine.creation as C
import gradcli.engine.functions as F
import gradcli.engine.logical as L
from gradcli.engine import function as AF
from gradcli.engine.gradcheck import gradcheck, gradgradcheck
from gradcli.engine import forward_ad as FWD, hooks as HK  # forward AD, graph hooks
from gradcli.engine import anomaly as ANOMALY
from gradcli.lang import arrays as ARR
from gradcli.engine import random as RNG, rearranging as REARRANGING, tensor_str
from gradcli.lang import classes
from gradcli.engine import amp as AMP, cuda as CUDA_BUILD, devices as D, dtype_info as DTYPE_INFO
from gradcli.engine import saved as SAVED, state as STATE
from gradcli.engine.hooks import RemovableHandle
from gradcli.engine import modes as M
from gradcli.engine import ops as O
from gradcli.engine.budget import Checking
from gradcli.errors import ArgumentError, ShapeError, ValueDomainError
from gradcli.engine.autograd import backward as autograd_backward, grad as autograd_grad
from gradcli.engine.autograd import hessian, hvp, jacobian, jvp, vhp, vjp
from gradcli.engine.tensor import READS, AccumulateGrad, GradMode, Node, Tensor
from gradcli.lang import containers, distributed_names, module_paths
from gradcli.lang.exceptions import ExceptionValue
from gradcli.lang import torch_testing as TESTING, type_tests
from gradcli.lang.stdlib import runtime
from gradcli.lang.formatting import DtypeName, format_template
from gradcli.lang import library
from gradcli.lang.library import Deferred, loaded
from gradcli.lang.namespace import Namespace
from gradcli.lang.numpy_facade import dispatch as numpy_dispatch
from gradcli.lang.numpy_facade.namespace import NUMPY
from gradcli.lang.numpy_facade.tensors import as_tensor, from_numpy
from gradcli.lang.limits import check_list, check_string


def Variable(data: Any, requires_grad: bool = False, volatile: bool = False) -> Tensor:
    """PyTorch 0.3's Variable: today simply a tensor (a copy, so the wrapped tensor stays a constant)."""
    t = F.as_tensor(data)
    t = Tensor(t, dtype=t.dtype)
    if requires_grad:
        t.requires_grad_(True)
    return t


def allclose(a: Any, b: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """`torch.allclose`, accepting lists and numbers on either side so asserts read naturally."""
    x, y = (F.as_tensor(v)._data.astype(float) for v in (a, b))
    rtol, atol = (F.number_arg(v, "allclose", name) for v, name in ((rtol, "rtol"), (atol, "atol")))
    try:
        np.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        raise ArgumentError(f"allclose: shapes {x.shape} and {y.shape} do not broadcast",
                            hint="compare tensors of the same shape") from None
    return bool(np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan))


def _number_or_tensor(tensor_fn: Callable, number_fn: Callable, numbers: int) -> Callable:
    """`max(a, b)` and `abs(-2)` on numbers are Python's; on tensors they are torch's; on NumPy's arrays
    Python's, which asks NumPy (through the facade's checks)."""
    def call(*args: Any, **kwargs: Any) -> Any:
        if len(args) == numbers and py.all(isinstance(a, (int, float)) for a in args) and not kwargs:
            return number_fn(*args)
        if py.any(isinstance(a, np.ndarray) for a in args):
            return numpy_dispatch.call(number_fn.__name__, number_fn, *args, **kwargs)
        return tensor_fn(*args, **kwargs)
    call.__name__ = tensor_fn.__name__
    call.__doc__ = tensor_fn.__doc__
    call.__wrapped__ = tensor_fn  # type: ignore[attr-defined]
    return call


def _round(x: Any, *args: Any, **kwargs: Any) -> Any:
    """Python's round of a number (`round(2.675, 2)`) or of NumPy's array, torch.round of a tensor."""
    if isinstance(x, np.ndarray):
        return numpy_dispatch.call("round", py.round, x, *args, **kwargs)
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        digits = args[0] if args else kwargs.get("ndigits", kwargs.get("decimals"))
        return py.round(x) if digits is None else py.round(x, digits)
    return F.round(x, *args, **kwargs)


_round.__wrapped__ = F.round  # type: ignore[attr-defined]


# name -> callable. Functions of the op table and constructors; `print` is handled by the interpreter.
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "tensor": C.tensor, "Variable": Variable, "Tensor": C.float_tensor, "FloatTensor": C.float_tensor,
    "DoubleTensor": C.double_tensor,
    "ones": C.ones, "zeros": C.zeros, "full": C.full, "eye": C.eye, "arange": C.arange, "linspace": C.linspace,
    "rand": C.rand, "randn": C.randn, "ones_like": C.ones_like, "zeros_like": C.zeros_like,
    "full_like": C.full_like, "empty_like": C.empty_like,
    "manual_seed": C.manual_seed,
    **L.FUNCTIONS,
    **{name: getattr(F, name) for name in O.named("functions")},  # every function the op table declares
    **{name: c.function for c in F.COMPOSITES for name in c.functions},  # and every family's declared composites
    "softplus": F.softplus,
    "round": _round,
    "abs": _number_or_tensor(F.abs, py.abs, 1),
    "max": _number_or_tensor(F.max, py.max, 2), "min": _number_or_tensor(F.min, py.min, 2),
    "grad": autograd_grad, "jacobian": jacobian, "hessian": hessian,
    "allclose": allclose,
}

# PyTorch's random numbers (engine/random.py) and the session's default dtype.
FUNCTIONS.update({
    "randint": C.randint, "randperm": C.randperm, "rand_like": C.rand_like, "randn_like": C.randn_like,
    "normal": C.normal, "bernoulli": C.bernoulli, "multinomial": C.multinomial, "initial_seed": C.initial_seed,
    "set_default_dtype": C.set_default_dtype, "get_default_dtype": C.get_default_dtype,
    "empty": C.zeros,  # uninitialised memory in PyTorch; zeros here, since a program must not read garbage
})

# Names the census of tutorial code (docs/coverage.md) found missing: engine/rearranging.py and constructors.
FUNCTIONS.update({**{name: c.function for c in REARRANGING.COMPOSITES for name in c.functions},
                  "LongTensor": C.long_tensor, "IntTensor": C.int_tensor, "ByteTensor": C.byte_tensor})

# The functions that compute gradients, by kind: a script runner checks each call (`Hooks.on_gradient`).
GRADIENT_FUNCTIONS: dict[str, Callable[..., Any]] = {"grad": autograd_grad, "jacobian": jacobian, "hessian": hessian,
                                                     "vjp": vjp, "jvp": jvp, "hvp": hvp, "vhp": vhp}


_GRADIENT_KINDS = {id(f): kind for kind, f in GRADIENT_FUNCTIONS.items()}  # the functions live as long as gradcli


def gradient_kind(func: Any) -> str | None:
    """The kind of gradient `func` computes (GRADIENT_FUNCTIONS' names; "func:<kind>" for torch.func's,
    see `FUNC.check_kind`; "tangent" for unpack_dual), or None for a function that computes none."""
    transforms = loaded("gradcli.func.transforms")  # none of torch.func's transforms exists before it is
    transform = transforms.check_kind(func) if transforms is not None else None
    if transform is not None:
        return "func:" + transform
    if func is FWD.unpack_dual:
        return "tangent"
    return _GRADIENT_KINDS.get(id(func))


# Functions that are the same primitive under another name, for `gradcli ops`.
OP_OF: dict[str, O.Op] = {op.name: op for op in O.TABLE}
OP_OF.update({**O.named("functions"), **O.named("methods"), **O.named("in_place_methods"),  # aliases (arcsin, ...), X_
              **O.named("functional")})  # and F.X (relu6 and hardtanh are one primitive)
OP_OF.update({name: c.op for c in F.COMPOSITES if c.op for name in c.functions + c.methods})
OP_OF.update({"T": O.PERMUTE, "expand_as": O.EXPAND, "contiguous": O.CLONE})
OP_OF.update({name: c.op for c in F.COMPOSITES if c.op for name in c.linalg if name not in OP_OF})  # inv, vector_norm
OP_OF.update({name: c.op for c in REARRANGING.COMPOSITES if c.op for name in c.functions + c.methods})
OP_OF.update({name: c.op for c in F.COMPOSITES + REARRANGING.COMPOSITES if c.op for name in c.in_place_methods})
OP_OF["index_put_"] = OP_OF["put_"] = O.INDEX_PUT  # written by hand (engine/inplace.py), not derived from a declaration

# Functions and methods that record another primitive when given other arguments (tensors where numbers
# are usual, a rounding mode): name -> its forms, each (primitive, the arguments as `gradcli ops` writes them after x).
TENSOR_FORMS: dict[str, tuple[tuple[O.Op, str], ...]] = {
    **{name: ((O.CLAMP_TENSOR, "min=Tensor, max=Tensor"),) for name in ("clamp", "clip")},
    "div": ((O.DIV_TRUNC, "other, rounding_mode='trunc'"), (O.DIV_FLOOR, "other, rounding_mode='floor'")),
    "add": ((O.ADD_ALPHA, "other, alpha=2"),), "sub": ((O.SUB_ALPHA, "other, alpha=2"),)}


# `torch.float32`, `np.float64`... evaluate to their names, which every dtype= argument accepts.
_DTYPE_NAMES = {name: name for name in C.DTYPE_NAMES}
_TORCH_DTYPES = {name: DtypeName(name) for name in C.DTYPE_NAMES}

AUTOGRAD_FUNCTIONAL = Namespace("torch.autograd.functional", {"jacobian": jacobian, "hessian": hessian, "vjp": vjp,
                                                               "jvp": jvp, "hvp": hvp, "vhp": vhp})
AUTOGRAD_FUNCTION = Namespace("torch.autograd.function", {"Function": classes.FUNCTION,
                                                          "FunctionCtx": classes.BaseClass("FunctionCtx", AF.FunctionCtx,
                                                                                            module="torch.autograd.function"),
                                                          "once_differentiable": AF.once_differentiable})
AUTOGRAD = Namespace("torch.autograd", {"grad": autograd_grad, "backward": autograd_backward, "Variable": Variable,
                                        "set_detect_anomaly": ANOMALY.set_detect_anomaly,
                                        "detect_anomaly": ANOMALY.detect_anomaly,
                                        "functional": AUTOGRAD_FUNCTIONAL, "Function": classes.FUNCTION,
                                        "function": AUTOGRAD_FUNCTION, "gradcheck": gradcheck,
                                        "gradgradcheck": gradgradcheck})
LINALG = Namespace("torch.linalg", {name: c.function for c in F.COMPOSITES for name in c.linalg})  # declared


# -- torch.nn.functional, torch.nn and torch.optim ------------------------------------------------------
def _is_tensor(obj: Any) -> bool:
    """`torch.is_tensor(obj)`: whether obj is a tensor (a Parameter is one)."""
    return isinstance(obj, Tensor)


def _constructor(cls: type) -> Callable[..., Any]:
    """A class as a program calls it (`nn.Linear(2, 3)`): a function, since calling types is refused."""
    def make(*args: Any, **kwargs: Any) -> Any:
        return cls(*args, **kwargs)
    make.__name__ = make.__qualname__ = cls.__name__
    make.__doc__ = cls.__doc__
    make.__wrapped__ = cls  # type: ignore[attr-defined]
    return make


def _with_statics(cls: type, statics: tuple[str, ...]) -> Any:
    """A class as a program calls it, with the static and class methods tutorials call on the class itself
    (`nn.Transformer.generate_square_subsequent_mask(5)`, `nn.Embedding.from_pretrained(w)`): a class of
    its own per wrapped class, since what a program may read is listed per class."""
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        return cls(*args, **kwargs)
    kind = type(cls.__name__, (), {"program_attributes": frozenset(statics), "__call__": call,
                                   "__wrapped__": cls, "__doc__": cls.__doc__, "__name__": cls.__name__,
                                   **{name: staticmethod(getattr(cls, name)) for name in statics}})
    return kind()


# The torch library's namespaces are made empty and filled by family the first time a program reads one of them
# (`Namespace`'s fill): `_load(family)` imports the family's packages and fills all its namespaces at once.
_LOADED_FAMILIES: set[str] = set()


def _load(family: str) -> None:
    """Importing a family is gradcli's start-up, paid for when a program first needs it: it runs outside the
    program's clock (`Checking`), so a time limit never leaves a family half-imported. Should it fail all the
    same (a memory limit, an interrupt), the next read tries again."""
    if family not in _LOADED_FAMILIES:
        _LOADED_FAMILIES.add(family)
        try:
            with Checking(1):
                _LOADERS[family]()
        except BaseException:
            _LOADED_FAMILIES.discard(family)
            raise


def _lazy(name: str, family: str, members: dict | None = None, refusal: str = "") -> Namespace:
    return Namespace(name, {} if members is None else members, lambda filling: _load(family), refusal)


def _deferred(module: str, name: str, family: str) -> Deferred:
    """`module.name` in a table until its family loads (which puts the function itself in the table)."""
    def resolve() -> Callable[..., Any]:
        _load(family)
        return getattr(importlib.import_module(module), name)
    return Deferred(module, name, resolve)


def load_library() -> None:
    """Every family loaded: for what must see every name at once (`gradcli ops`, a listing of `torch.nn`)."""
    for family in _LOADERS:
        _load(family)


_TORCH_NN_FUNCTIONS = ("selu", "celu", "cosine_similarity", "pairwise_distance", "layer_norm", "dropout",
                       "binary_cross_entropy_with_logits", "kl_div")
"""`torch.X` for these of `torch.nn.functional`, without the deprecated size_average/reduce (deferred until
`gradcli.nn` is loaded, then the functions)."""
FUNCTIONS.update({name: _deferred("gradcli.nn.functional", name, "nn") for name in _TORCH_NN_FUNCTIONS})
NN_FUNCTIONAL = _lazy("torch.nn.functional", "nn")
NN_INIT = _lazy("torch.nn.init", "nn")
NN_UTILS = _lazy("torch.nn.utils", "nn")
NN_UTILS_CLIP_GRAD = _lazy("torch.nn.utils.clip_grad", "nn")
NN_UTILS_RNN = _lazy("torch.nn.utils.rnn", "nn")
NN_UTILS_PARAMETRIZATIONS = _lazy("torch.nn.utils.parametrizations", "nn")
NN_UTILS_PARAMETRIZE = _lazy("torch.nn.utils.parametrize", "nn")
NN = _lazy("torch.nn", "nn")
LR_SCHEDULER = _lazy("torch.optim.lr_scheduler", "optim", {"LRScheduler": classes.LR_SCHEDULER})
OPTIMIZER_MODULE = Namespace("torch.optim.optimizer", {"Optimizer": classes.OPTIMIZER})
OPTIM = _lazy("torch.optim", "optim", {"Optimizer": classes.OPTIMIZER, "optimizer": OPTIMIZER_MODULE,
                                       "lr_scheduler": LR_SCHEDULER})
DATA = _lazy("torch.utils.data", "data")
CHECKPOINT = _lazy("torch.utils.checkpoint", "nn")
UTILS = Namespace("torch.utils", {"data": DATA, "checkpoint": CHECKPOINT})
MODULE_ATTRIBUTES = classes.MODULE_ATTRIBUTES
MODULE_MEMBERS: dict[type, frozenset] = {}
"""What a program may read on each built-in module besides `MODULE_ATTRIBUTES` (filled when `gradcli.nn` loads)."""


def nn_composites() -> tuple:
    """Every `gradcli/nn` family's declared composites, from which `F.X` and their `OP_OF` are derived."""
    from gradcli.nn import activations, conv, conv_transpose, functional, grid_sampling, normalization, shaping, \
        transformer
    return sum((family.COMPOSITES for family in (functional, conv, transformer, conv_transpose, normalization,
                                                  activations, shaping, grid_sampling)), ())


def _load_nn() -> None:
    from gradcli.nn import (activations, checkpoint, conv_transpose, layers, losses, normalization, packing, parallel,
                            parametrize, recurrent, shaping, transformer, utils as nn_utils, volumes, weight_norms)
    from gradcli.nn import compiled, functional as NF, init as I, modules as nn
    FUNCTIONS.update({name: getattr(NF, name) for name in _TORCH_NN_FUNCTIONS})
    TORCH.members.update({**{name: FUNCTIONS[name] for name in _TORCH_NN_FUNCTIONS}, **compiled.NAMES})
    OP_OF.update(losses.OPS)
    NN_FUNCTIONAL.members.update({**{name: FUNCTIONS[name] if name in FUNCTIONS else getattr(NF, name)
                                     for name in O.named("functional")}})  # the primitives' F.X
    NN_INIT.members.update({name: getattr(I, name) for name in (
        "calculate_gain", "uniform_", "normal_", "constant_", "ones_", "zeros_", "xavier_uniform_", "xavier_normal_",
        "kaiming_uniform_", "kaiming_normal_", "orthogonal_", "trunc_normal_")})
    NN_INIT.members.update({name.rstrip("_"): NN_INIT.members[name] for name in (
        "normal_", "constant_", "uniform_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_",
        "orthogonal_")})  # PyTorch's deprecated names without the underscore, which call the same initialisers
    NN_UTILS.members.update({name: getattr(nn_utils, name) for name in nn_utils.NAMES})
    NN.members.update({"functional": NN_FUNCTIONAL, "init": NN_INIT, "Parameter": nn.Parameter,
                       "UninitializedParameter": nn.UninitializedParameter, "Module": classes.MODULE,
                       "utils": NN_UTILS,
                       **{name: _constructor(cls) for name, cls in {**nn.MODULES, **layers.LAYERS}.items()}})
    families = (recurrent, transformer, conv_transpose, normalization, losses, activations, shaping, volumes,
                parallel)  # the modules of `gradcli/nn` that each add layers (`LAYERS`, `MEMBERS`), maybe functions
    for family in families:
        NN.members.update({name: _constructor(cls) for name, cls in family.LAYERS.items()})
    NN_FUNCTIONAL.members.update(losses.FUNCTIONS)  # declared by LOSSES
    for composite in nn_composites():  # F.X by COMPOSITES
        NN_FUNCTIONAL.members.update({name: composite.function for name in composite.functional})
        OP_OF.update({name: composite.op for name in composite.functional if composite.op})
    NN.members["Transformer"] = _with_statics(transformer.Transformer, ("generate_square_subsequent_mask",))
    NN.members["Embedding"] = _with_statics(layers.Embedding, ("from_pretrained",))
    NN_UTILS_CLIP_GRAD.members.update({name: getattr(nn_utils, name) for name in (
        "clip_grad_norm_", "clip_grad_value_")})
    NN_UTILS.members["clip_grad"] = NN_UTILS_CLIP_GRAD
    NN_UTILS_RNN.members.update({**packing.NAMES, "PackedSequence": _constructor(packing.PackedSequence)})
    NN_UTILS.members["rnn"] = NN_UTILS_RNN
    NN_UTILS.members.update(weight_norms.NAMES)
    OP_OF["weight_norm"] = weight_norms.OP
    NN_UTILS_PARAMETRIZATIONS.members.update(weight_norms.PARAMETRIZATIONS)
    NN_UTILS_PARAMETRIZE.members.update(parametrize.NAMES)
    NN_UTILS.members.update({"parametrizations": NN_UTILS_PARAMETRIZATIONS, "parametrize": NN_UTILS_PARAMETRIZE})
    CHECKPOINT.members.update(checkpoint.NAMES)
    NN.members.update({path.rsplit(".", 1)[1]: MODULES[path] for path in module_paths.NN_PATHS})
    MODULE_MEMBERS.update({**layers.MEMBERS, **{k: v for f in families for k, v in f.MEMBERS.items()},
                          nn.Linear: frozenset({"weight", "bias", "in_features", "out_features"}),
                          nn.LayerNorm: frozenset({"weight", "bias", "normalized_shape", "eps"}),
                          nn.Dropout: frozenset({"p"}), nn.Flatten: frozenset({"start_dim", "end_dim"}),
                          nn.Sequential: frozenset({"append"})})
    _register_classes(NN, {**_DEFINED_IN, **{name: "torch.nn.modules.loss" for name in losses.LAYERS}})
    type_tests.register(NN_UTILS_RNN.members["PackedSequence"], "PackedSequence", (packing.PackedSequence,),
                        "torch.nn.utils.rnn")
    type_tests.register(nn.UninitializedParameter, "UninitializedParameter", (Tensor,), "torch.nn.parameter",
                        test=lambda v: type(v) is Tensor and bool(tensor_str.UNINITIALIZED) and tensor_str.UNINITIALIZED.has(v))
    type_tests.register(nn.Parameter, "Parameter", (Tensor,), "torch.nn.parameter",
                        test=lambda v: type(v) is Tensor and tensor_str.PARAMETERS.has(v))


def _load_optim() -> None:
    from gradcli.optim import lbfgs, lr_scheduler, optimizers as optim
    LR_SCHEDULER.members.update({name: _constructor(cls) for name, cls in lr_scheduler.SCHEDULERS.items()})
    OPTIM.members.update({**{name: _constructor(cls) for name, cls in optim.OPTIMIZERS.items()},
                          "LBFGS": _constructor(lbfgs.LBFGS)})
    _register_classes(OPTIM, _DEFINED_IN)
    _register_classes(LR_SCHEDULER, {})  # isinstance(s, StepLR); printed under torch.optim.lr_scheduler


def _load_data() -> None:
    from gradcli.data import loading as data
    DATA.members.update({**{name: _constructor(cls) for name, cls in data.CLASSES.items()},
                         "Dataset": classes.DATASET, "IterableDataset": classes.ITERABLE_DATASET, **data.FUNCTIONS})
    DATA.members.update({path.rsplit(".", 1)[1]: MODULES[path] for path in module_paths.DATA_PATHS})
    DATA.members["distributed"] = MODULES["torch.utils.data.distributed"]
    _register_classes(DATA, {"DataLoader": "torch.utils.data.dataloader", "RandomSampler": "torch.utils.data.sampler",
                             "TensorDataset": "torch.utils.data.dataset", "Subset": "torch.utils.data.dataset"})


def _load_distributed() -> None:
    """torch.distributed on a world of one, torch.multiprocessing, DistributedDataParallel beside DataParallel."""
    from gradcli.distributed import parallel as DDP
    for path, space in distributed_names.namespaces(_constructor).items():
        _DISTRIBUTED[path].members.update({name: _DISTRIBUTED[value.name] if isinstance(value, Namespace) else value
                                           for name, value in space.members.items()})  # the same sub-namespaces
    MODULES["torch.nn.parallel"].members.update(DataParallel=NN.members["DataParallel"],
                                                DistributedDataParallel=_constructor(DDP.DistributedDataParallel))
    MODULE_MEMBERS.update(distributed_names.members())


OPTIMIZER_ATTRIBUTES = frozenset({"step", "zero_grad", "param_groups", "state_dict", "load_state_dict",
                                  "add_param_group"})
SCHEDULER_ATTRIBUTES = classes.SCHEDULER_MEMBERS
GENERATOR_ATTRIBUTES = frozenset({"manual_seed", "seed", "initial_seed"})
_CONSTANTS = {"inf": float("inf"), "nan": float("nan"), "pi": float(np.pi), "e": float(np.e)}
CUDA = Namespace("torch.cuda", {"is_available": D.is_available, "device_count": D.device_count,
                                "manual_seed": D.ignore_cuda_seed, "manual_seed_all": D.ignore_cuda_seed,
                                **CUDA_BUILD.NAMES})
AMP_NAMESPACE = Namespace("torch.amp", {"autocast": _constructor(AMP.autocast), "GradScaler": _constructor(AMP.GradScaler)})
CUDA.members["amp"] = CUDA_AMP = Namespace("torch.cuda.amp", {"autocast": AMP.cuda_autocast,
                                                              "GradScaler": AMP.cuda_grad_scaler})
BACKENDS_MPS = Namespace("torch.backends.mps", {"is_available": D.no_mps, "is_built": D.no_mps})
BACKENDS_CUDA = Namespace("torch.backends.cuda", {"matmul": CUDA_BUILD.MATMUL, "is_built": D.no_mps})
BACKENDS = Namespace("torch.backends", {"mps": BACKENDS_MPS, "cudnn": CUDA_BUILD.CUDNN, "cuda": BACKENDS_CUDA})
VERSION = Namespace("torch.version", {"cuda": None, "hip": None, "debug": False, "__version__": "2.13.0+cpu"})
ACCELERATOR = Namespace("torch.accelerator", {"is_available": D.is_available, "device_count": D.device_count,
                                              "current_accelerator": D.current_accelerator,
                                              "set_device_index": CUDA_BUILD.no_accelerator})
# torch's own switches: gradient modes, devices, defaults (functions of no op, not reachable as np.X)
_TORCH_ONLY = {"from_numpy": from_numpy, "as_tensor": as_tensor, "no_grad": M.no_grad, "enable_grad": M.enable_grad, "set_grad_enabled": M.set_grad_enabled,
               "inference_mode": M.inference_mode, "is_grad_enabled": M.is_grad_enabled,
               "is_inference_mode_enabled": M.is_inference_mode_enabled, "is_inference": Tensor.is_inference,
               "device": D.device, "utils": UTILS, "Generator": RNG.new_generator,
               "set_printoptions": tensor_str.set_printoptions,
               "cuda": CUDA, "backends": BACKENDS, "accelerator": ACCELERATOR, "set_default_device": D.set_default_device,
               "amp": AMP_NAMESPACE, "autocast": AMP_NAMESPACE.members["autocast"],
               "version": VERSION,
               "is_tensor": _is_tensor, "numel": Tensor.numel, "Size": _constructor(tensor_str.Size),
               "set_float32_matmul_precision": CUDA_BUILD.set_float32_matmul_precision,
               "range": C.range_, "finfo": DTYPE_INFO.finfo,
               "compile": _deferred("gradcli.nn.compiled", "compile_model", "nn"), "set_default_tensor_type": DTYPE_INFO.set_default_tensor_type,
               "random": Namespace("torch.random", {name: FUNCTIONS[name] for name in ("manual_seed", "initial_seed")}),
               "get_float32_matmul_precision": CUDA_BUILD.get_float32_matmul_precision,
               "equal": Tensor.equal, "is_anomaly_enabled": ANOMALY.is_anomaly_enabled,
               "is_anomaly_check_nan_enabled": ANOMALY.is_anomaly_check_nan_enabled}
# -- torch.distributions (gradcli/distributions): the classes, their module paths, constraints and kl
STATE.WARNINGS.append(runtime.show)  # PyTorch's warnings print where the program's prints do
runtime.RESETS.append(STATE.reset_warnings)  # a warning given once is given once per run
DISTRIBUTIONS = _lazy("torch.distributions", "distributions")
_DIST_MODULES = {f"torch.distributions.{module}": _lazy(f"torch.distributions.{module}", "distributions")
                 for module in ("constraints", "kl", "transforms", "constraint_registry",
                               *module_paths.DISTRIBUTION_FILES)}


def _load_distributions() -> None:
    import gradcli.distributions as DIST
    constructors = {name: _constructor(cls) for name, cls in DIST.CLASSES.items()}
    transforms = {name: _constructor(cls) for name, cls in DIST.TRANSFORMS.items()}
    TORCH.members.update(poisson=DIST.poisson, binomial=DIST.binomial)
    spaces = {module.rsplit(".", 1)[1]: space for module, space in _DIST_MODULES.items()}
    spaces["constraints"].members.update({name: _constructor(value) if isinstance(value, type) else value
                                          for name, value in DIST.constraints.NAMES.items()})
    spaces["kl"].members.update({name: DIST.FUNCTIONS[name] for name in ("kl_divergence", "register_kl")})
    spaces["constraint_registry"].members.update({name: DIST.FUNCTIONS[name] for name in ("biject_to", "transform_to")})
    spaces["transforms"].members.update(transforms)
    DISTRIBUTIONS.members.update({
        **constructors, **DIST.FUNCTIONS, **transforms,
        **{module: spaces[module] for module in ("constraints", "kl", "transforms", "constraint_registry")},
        "Distribution": _with_statics(DIST.Distribution, ("set_default_validate_args",)),
        "ExponentialFamily": _constructor(DIST.ExponentialFamily)})
    classes = {**DIST.CLASSES, "Distribution": DIST.Distribution, "ExponentialFamily": DIST.ExponentialFamily}
    for module, names in module_paths.DISTRIBUTION_FILES.items():
        DISTRIBUTIONS.members[module] = spaces[module]
        for name in names:
            stand_in = DISTRIBUTIONS.members[name]
            spaces[module].members[name] = stand_in
            type_tests.register(stand_in, name, (classes[name],), f"torch.distributions.{module}")
    for name, cls in DIST.TRANSFORMS.items():
        type_tests.register(transforms[name], name, (cls,), "torch.distributions.transforms")
    runtime.RESETS.append(DIST.reset)  # a program's register_kl and set_default_validate_args last for its run
    DIST.kl.WARNINGS.append(runtime.show)


# -- torch.func / functorch, torch.autograd.forward_ad and torch.autograd.graph (func/transforms.py, forward_ad.py)
TORCH_FUNC = _lazy("torch.func", "func")
FUNCTORCH = _lazy("functorch", "func")


def _load_func() -> None:
    from gradcli.func import transforms as FUNC
    TORCH_FUNC.members.update(FUNC.NAMES)
    FUNCTORCH.members.update(FUNC.NAMES)
    TORCH.members["vmap"] = FUNC.vmap


_LOADERS = {"nn": _load_nn, "optim": _load_optim, "data": _load_data, "distributions": _load_distributions,
            "func": _load_func, "distributed": _load_distributed}
AUTOGRAD_GRAPH = Namespace("torch.autograd.graph", {
    "Node": Node, "saved_tensors_hooks": _constructor(HK.saved_tensors_hooks),
    "save_on_cpu": _constructor(HK.save_on_cpu)})
AUTOGRAD.members["graph"] = AUTOGRAD_GRAPH
FORWARD_AD = Namespace("torch.autograd.forward_ad", {**FWD.NAMES, "dual_level": _constructor(FWD.dual_level)})
AUTOGRAD.members["forward_ad"] = FORWARD_AD
DUAL_ATTRIBUTES = frozenset({"primal", "tangent"})
CONTEXT_TYPES: tuple[type, ...] = (HK.saved_tensors_hooks, FWD.dual_level, ANOMALY.Switch, CUDA_BUILD.CudaDevice,
                                   AMP.autocast)
"""What `with` takes besides the gradient modes (the interpreter enters it; nothing else is entered)."""
_FUNC_MODULES = {"torch.func": TORCH_FUNC, "functorch": FUNCTORCH, "torch.autograd.graph": AUTOGRAD_GRAPH,
                 "torch.autograd.forward_ad": FORWARD_AD}

NOT_IN_TORCH = ("view", "expand", "view_as", "reshape_as", "softplus", "Variable", "grad", "jacobian", "hessian")
"""Names torch 2.13 has only as Tensor methods (declared so: their Composite has no function name), in
torch.nn.functional (softplus) or in torch.autograd (Variable, grad; jacobian and hessian in its `functional`),
each a bare name of `gradcli eval`: `torch.view(x, 4)` is PyTorch's AttributeError, and gradcli's refusal says
where the name is (lang/expressions.py; `tests/test_public_names.py` holds the namespaces to torch's)."""
TORCH = Namespace("torch", {**{k: v for k, v in FUNCTIONS.items() if k not in NOT_IN_TORCH}, "autograd": AUTOGRAD,
                            "func": TORCH_FUNC,
                            "vmap": _deferred("gradcli.func.transforms", "vmap", "func"), "distributions": DISTRIBUTIONS,
                            "poisson": _deferred("gradcli.distributions", "poisson", "distributions"),
                            "binomial": _deferred("gradcli.distributions", "binomial", "distributions"),
                            "__version__": "2.13.0+cpu",  # the PyTorch whose semantics gradcli follows
                            "testing": Namespace("torch.testing", {"assert_close": TESTING.assert_close}),
                            "nn": NN, "linalg": LINALG, "optim": OPTIM, **_TORCH_DTYPES, **_CONSTANTS, **_TORCH_ONLY})


# What `import ...` / `from ... import` binds. Keys are dotted module names.
MODULES: dict[str, Namespace] = {"torch": TORCH, "numpy": NUMPY, "numpy.linalg": NUMPY.members["linalg"],
                                 "numpy.matlib": NUMPY.members["matlib"],
                                 "torch.autograd": AUTOGRAD,
                                 "torch.nn": NN, "torch.nn.functional": NN_FUNCTIONAL, "torch.nn.init": NN_INIT,
                                 "torch.linalg": LINALG,
                                 "torch.optim": OPTIM, "torch.optim.optimizer": OPTIMIZER_MODULE,
                                 "torch.autograd.function": AUTOGRAD_FUNCTION, "torch.optim.lr_scheduler": LR_SCHEDULER,
                                 "torch.utils": UTILS, "torch.utils.data": DATA, "torch.nn.utils": NN_UTILS,
                                 "torch.nn.utils.rnn": NN_UTILS_RNN, "torch.nn.utils.clip_grad": NN_UTILS_CLIP_GRAD,
                                 "torch.nn.utils.parametrizations": NN_UTILS_PARAMETRIZATIONS,
                                 "torch.nn.utils.parametrize": NN_UTILS_PARAMETRIZE,
                                 "torch.amp": AMP_NAMESPACE, "torch.cuda.amp": CUDA_AMP,
                                 "torch.backends": BACKENDS, "torch.utils.checkpoint": CHECKPOINT, "torch.backends.mps": BACKENDS_MPS,
                                 "torch.backends.cuda": BACKENDS_CUDA, "torch.version": VERSION,
                                 "torch.autograd.functional": AUTOGRAD_FUNCTIONAL, **_FUNC_MODULES,
                                 "torch.distributions": DISTRIBUTIONS, **_DIST_MODULES}
MODULES["torch.testing"] = TORCH.members["testing"]
MODULES.update(module_paths.paths(NN, DATA))  # their namespaces fill from NN's and DATA's when first read
MODULES["torch.nn.parallel"] = Namespace("torch.nn.parallel", {}, lambda filling: _load("distributed"),
                                         refusal=distributed_names.PARALLEL_REFUSAL)
_DISTRIBUTED = {path: _lazy(path, "distributed", refusal=reason) for path, reason in distributed_names.PATHS.items()}
MODULES.update(_DISTRIBUTED)
TORCH.members.update(distributed=MODULES["torch.distributed"], multiprocessing=MODULES["torch.multiprocessing"])
MODULES["torch.backends.cudnn"] = CUDA_BUILD.CUDNN  # type: ignore[assignment]  # a module of switches

# Names bound before any import, so a one-liner can say torch.mean(...) or np.exp(...).
PRELUDE: dict[str, Any] = {"torch": TORCH, "np": NUMPY, "F": NN_FUNCTIONAL, **classes.BUILTINS}

TENSOR_ATTRIBUTES = frozenset({"data", "grad", "grad_fn", "creator", "requires_grad", "is_leaf", "shape", "dtype",
                               "ndim", "T", "mT", "mH", "H", "retains_grad", "device", "name", "is_cuda", "real"})
TENSOR_METHODS = frozenset({
    "backward", "retain_grad", "detach", "detach_", "zero_", "requires_grad_", "item", "tolist", "size", "dim", "numel",
    "nelement",
    "expand_as", "type",
    "all", "any",
})
TENSOR_METHODS |= {name for c in F.COMPOSITES for name in c.methods}
TENSOR_METHODS |= frozenset(L.FUNCTIONS)  # x.isnan(), x.eq(3), m.logical_and(n)
TENSOR_METHODS |= frozenset(O.named("methods"))  # every method the op table declares, and its in-place forms
TENSOR_METHODS |= frozenset(O.named("in_place_methods"))
TENSOR_METHODS |= {name for c in F.COMPOSITES + REARRANGING.COMPOSITES for name in c.in_place_methods}
# In-place random fills (torch.nn.init and dropout build on them).
TENSOR_METHODS |= {"uniform_", "normal_", "bernoulli_", "random_", "exponential_", "cauchy_", "multinomial"}
# in-place updates (PyTorch's rules: engine/inplace.py), devices and whole-tensor equality
TENSOR_METHODS |= {
    "add_", "sub_", "zero_", "fill_", "copy_", "to", "cpu", "cuda", "equal", "register_hook", "numpy",
    "is_inference", "contiguous", "is_contiguous",
}
TENSOR_METHODS |= {"register_post_accumulate_grad_hook"}
TENSOR_METHODS |= {name for c in REARRANGING.COMPOSITES for name in c.methods}
TENSOR_METHODS |= {"index_put_", "put_", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor",
                   "new", "element_size", "data_ptr", "stride", "resize", "resize_", "resize_as_", "type_as", "select",
                   "squeeze_", "unsqueeze_", "t_", "transpose_", "swapaxes_",
                   "swapdims_"}  # the census's
NODE_ATTRIBUTES = frozenset({"next_functions", "name", "metadata", "register_hook", "register_prehook", "apply"})
ACCUMULATE_ATTRIBUTES = frozenset({"variable", "name", "next_functions", "metadata", "register_hook",
                                   "register_prehook"})
RESULT_ATTRIBUTES = frozenset({"values", "indices"})
SLOGDET_ATTRIBUTES = frozenset({"sign", "logabsdet"})


def attribute_names(value: Any) -> frozenset:
    """The attributes a program may read on `value` (for lookups and did-you-mean suggestions)."""
    if isinstance(value, Namespace):
        return frozenset(value.members)
    names = _ATTRIBUTES_BY_TYPE.get(type(value))
    if names is None:
        names = _ATTRIBUTES_BY_TYPE[type(value)] = _attribute_names(value)
    return names


_ATTRIBUTES_BY_TYPE: dict[type, frozenset] = {}
"""What `_attribute_names` decides depends on the value's type alone, so it is decided once per type."""


def _attribute_names(value: Any) -> frozenset:
    if isinstance(value, Tensor):
        return TENSOR_ATTRIBUTES | TENSOR_METHODS
    if isinstance(value, Node):
        return NODE_ATTRIBUTES | SAVED.NAMES
    if isinstance(value, AccumulateGrad):
        return ACCUMULATE_ATTRIBUTES
    if isinstance(value, F.MaxMin):
        return RESULT_ATTRIBUTES
    if isinstance(value, FWD.UnpackedDualTensor):
        return DUAL_ATTRIBUTES
    if isinstance(value, (np.ndarray, np.generic)):  # NumPy gives its scalars (`np.finfo(t).eps`) the array's API
        return ARR.NDARRAY_ATTRIBUTES | frozenset(ARR.NDARRAY_METHODS)
    if isinstance(value, F.SignLogAbsDet):
        return SLOGDET_ATTRIBUTES
    if isinstance(value, library.Module):
        # a parametrized module's class is made for it (ParametrizedLinear): it has its base's members
        return MODULE_ATTRIBUTES | next((MODULE_MEMBERS[t] for t in type(value).__mro__ if t in MODULE_MEMBERS),
                                        frozenset())
    if isinstance(value, library.Optimizer):
        return OPTIMIZER_ATTRIBUTES
    if isinstance(value, library.LRScheduler):
        return SCHEDULER_ATTRIBUTES
    if isinstance(value, RNG.Generator):
        return GENERATOR_ATTRIBUTES
    data = loaded("gradcli.data.loading")
    if data is not None and type(value) in data.MEMBERS:
        return data.MEMBERS[type(value)]
    if type(value) in SEQUENCE_METHODS:
        return frozenset(SEQUENCE_METHODS[type(value)])
    if isinstance(value, ExceptionValue):
        return EXCEPTION_ATTRIBUTES
    if isinstance(value, D.Device):
        return DEVICE_ATTRIBUTES
    if isinstance(value, RemovableHandle):
        return HANDLE_ATTRIBUTES
    listed = getattr(type(value), "program_attributes", None)  # a facade's objects list their own
    return listed if isinstance(listed, frozenset) else frozenset()


# -- string and list methods, devices, hook handles --------------------------------------------


def _join(separator: str, values: Any) -> str:
    from gradcli.lang.iteration import items
    parts = items(values)
    if not py.all(isinstance(p, str) for p in parts):
        raise ArgumentError("join() takes strings", hint="convert first: ', '.join(str(v) for v in values)")
    check_string(py.sum(map(len, parts)) + len(separator) * max(len(parts) - 1, 0))
    return separator.join(parts)


def _append(values: list, value: Any) -> None:
    check_list(len(values) + 1)
    values.append(value)


def _extend(values: list, more: Any) -> None:
    from gradcli.lang.iteration import items
    added = items(more)
    check_list(len(values) + len(added))
    values.extend(added)


def _insert(values: list, where: int, value: Any) -> None:
    check_list(len(values) + 1)
    values.insert(where, value)


def _list_pop(values: list, where: int = -1) -> Any:
    from gradcli.lang.exceptions import raise_python
    if not values:
        raise_python("IndexError", "pop from empty list")
    if not -len(values) <= where < len(values):
        raise_python("IndexError", "pop index out of range")
    return values.pop(where)


def _position(values: list | str, value: Any, *bounds: int) -> int:
    """`index`: a string's is Python's; a list's compares within one budget of items (`operators.position`)."""
    from gradcli.lang.exceptions import raise_python
    from gradcli.lang.formatting import to_repr
    from gradcli.lang.operators import position
    if isinstance(values, str):
        try:
            return values.index(value, *bounds)
        except ValueError:
            raise_python("ValueError", "substring not found")
    window = slice(*bounds, None) if len(bounds) < 2 else slice(*bounds)
    found = position(values, value, *window.indices(len(values))[:2])
    if found is None:
        raise_python("ValueError", f"{to_repr(value)} is not in list")
    return found


def _list_count(values: list, value: Any) -> int:
    from gradcli.lang.operators import count
    return count(values, value)


def _list_remove(values: list, value: Any) -> None:
    del values[_position(values, value)]


def _sort(values: list, reverse: bool = False) -> None:
    from gradcli.lang.python_builtins import sorted_
    values[:] = sorted_(values, reverse=reverse)


def _split(text: str, sep: str | None = None, maxsplit: int = -1) -> list[str]:
    check_list(text.count(sep) + 1 if sep else len(text) // 2 + 1)
    return text.split(sep, maxsplit)


def _replace(text: str, old: str, new: str, count: int = -1) -> str:
    check_string(len(text) + (text.count(old) if old else len(text) + 1) * max(len(new) - len(old), 0))
    return text.replace(old, new, count)


def _padded(method: Callable[..., str]) -> Callable[..., str]:
    def pad(text: str, width: int, *fill: str) -> str:
        check_string(width)
        return method(text, width, *fill)
    pad.__name__ = method.__name__
    return pad


def _cased(method: Callable[[str], str]) -> Callable[[str], str]:
    """`upper`, `lower`, `title`, `capitalize`: Unicode's case mappings can triple a string ('\ufb03'.upper() is
    'FFI'), at most three times a string within the limit, so the result is checked once it is made."""
    def cased(text: str) -> str:
        result = method(text)
        check_string(len(result))
        return result
    cased.__name__ = method.__name__
    return cased


SEQUENCE_METHODS: dict[type, dict[str, Callable[..., Any]]] = {
    str: {"format": lambda s, *args, **kwargs: format_template(s, args, kwargs), "join": _join,
          "upper": _cased(str.upper), "lower": _cased(str.lower), "strip": str.strip, "startswith": str.startswith,
          "endswith": str.endswith, "split": _split, "replace": _replace, "lstrip": str.lstrip,
          "rstrip": str.rstrip, "title": _cased(str.title), "capitalize": _cased(str.capitalize), "find": str.find,
          "count": str.count, "index": _position, "isdigit": str.isdigit, "isalpha": str.isalpha,
          "isspace": str.isspace, "isupper": str.isupper, "islower": str.islower, "splitlines": str.splitlines,
          "center": _padded(str.center), "ljust": _padded(str.ljust), "rjust": _padded(str.rjust),
          "zfill": _padded(str.zfill)},
    list: {"append": _append, "extend": _extend, "insert": _insert, "pop": _list_pop, "index": _position,
           "count": _list_count, "remove": _list_remove, "reverse": list.reverse, "sort": _sort, "copy": list.copy,
           "clear": list.clear},
    dict: containers.DICT_METHODS,
    collections.defaultdict: containers.DICT_METHODS,  # an optimizer's `state`
    collections.OrderedDict: {**containers.DICT_METHODS, "move_to_end": containers.move_to_end},  # state_dict()
    set: containers.SET_METHODS,
}
EXCEPTION_ATTRIBUTES = frozenset({"args"})
DEVICE_ATTRIBUTES = frozenset({"type", "index"})
HANDLE_ATTRIBUTES = frozenset({"remove"})


class NodeName(str):
    """`y.grad_fn.name`: gradcli's attribute and PyTorch's method at once (`name()` gives PyTorch's text,
    which spells the nodes that are not derivative formulas with their C++ namespace)."""

    def __call__(self) -> str:
        return str(self) if re.search(r"Backward[0-9]*$", self) else f"torch::autograd::{self}"


def bound_method(owner: str | list | dict | set, name: str) -> Callable[..., Any]:
    """`'...'.format`, `xs.append`: gradcli's safe version of the method, bound to `owner`."""
    method = SEQUENCE_METHODS[type(owner)][name]

    def call(*args: Any, **kwargs: Any) -> Any:
        return method(owner, *args, **kwargs)
    call.__name__ = name
    return call


TORCH_MODULES = ("gradcli.engine", "gradcli.nn", "gradcli.optim", "gradcli.data", "gradcli.func",
                 "gradcli.distributions")
"""Where gradcli's own torch functions live: the engine and the library packages beside it."""


def takes_device(func: Any) -> bool:
    """PyTorch's functions take `device=`; gradcli's own torch functions accept it for the CPU."""
    return (getattr(func, "__module__", "") or "").startswith(TORCH_MODULES) or \
        (getattr(getattr(func, "__self__", None), "__module__", "") or "").startswith(TORCH_MODULES)


check_device = D.check_device


_UNINITIALIZED_READS = frozenset({"requires_grad", "requires_grad_", "dtype", "data", "grad", "grad_fn", "is_leaf",
                                  "device", "size"})
"""What PyTorch lets a program read of an `UninitializedParameter` (checked against torch 2.13)."""


def refuse_uninitialized(attr: str) -> None:
    """A lazy layer's parameter before the layer's first call has no shape yet: PyTorch's errors for it."""
    if attr == "shape":
        raise ShapeError("Can't access the shape of an uninitialized parameter or buffer. This error usually happens "
                         "in `load_state_dict` when trying to load an uninitialized parameter into an initialized "
                         "one. Call `forward` to initialize the parameters before accessing their attributes.",
                         hint="call the model once on a batch first: model(x)")
    if attr not in _UNINITIALIZED_READS:
        raise ValueDomainError(f"Attempted to use an uninitialized parameter in <method '{attr}' of "
                               "'torch._C.TensorBase' objects>. This error happens when you are using a `LazyModule` "
                               "or explicitly manipulating `torch.nn.parameter.UninitializedParameter` objects. When "
                               "using LazyModules Call `forward` with a dummy batch to initialize the parameters "
                               "before calling torch functions", hint="call the model once on a batch first: model(x)")


def _register_classes(namespace: Namespace, defined_in: dict[str, str]) -> None:
    """`isinstance(m, nn.Linear)`: the callables of a library namespace that stand for its classes (each printed
    under the module `defined_in` names for it, else under the namespace)."""
    for member in list(namespace.members.values()):
        cls = getattr(member, "__wrapped__", None)
        if isinstance(cls, type):
            type_tests.register(member, cls.__name__, (cls,), defined_in.get(cls.__name__, namespace.name))


# Where PyTorch defines each class gradcli offers, for `print(type(m))` (read from torch 2.13).
_PYTORCH_MODULES = {
    "torch.nn.modules.activation": "MultiheadAttention PReLU GLU Hardshrink Softshrink Tanhshrink Threshold CELU ELU GELU Hardsigmoid Hardswish Hardtanh LeakyReLU LogSigmoid LogSoftmax Mish "
                                   "ReLU ReLU6 SELU SiLU Sigmoid Softmax Softmin Softplus Softsign Tanh",
    "torch.nn.modules.batchnorm": "BatchNorm1d BatchNorm2d",
    "torch.nn.modules.instancenorm": "InstanceNorm1d InstanceNorm2d",
    "torch.nn.modules.container": "ModuleDict ModuleList Sequential ParameterList ParameterDict",
    "torch.nn.modules.conv": "Conv1d Conv2d LazyConv1d LazyConv2d ConvTranspose1d ConvTranspose2d ConvTranspose3d",
    "torch.nn.modules.dropout": "Dropout Dropout2d",
    "torch.nn.modules.flatten": "Flatten Unflatten",
    "torch.nn.modules.linear": "Identity LazyLinear Linear",
    "torch.nn.modules.normalization": "LayerNorm GroupNorm RMSNorm",
    "torch.nn.modules.distance": "CosineSimilarity PairwiseDistance",
    "torch.nn.modules.padding": "ConstantPad1d ConstantPad2d ZeroPad1d ZeroPad2d",
    "torch.nn.modules.pixelshuffle": "PixelShuffle PixelUnshuffle",
    "torch.nn.modules.upsampling": "Upsample UpsamplingNearest2d UpsamplingBilinear2d",
    "torch.nn.modules.fold": "Unfold Fold",
    "torch.nn.modules.pooling": "AvgPool1d AdaptiveAvgPool2d AvgPool2d MaxPool1d MaxPool2d MaxUnpool1d MaxUnpool2d",
    "torch.nn.modules.sparse": "Embedding",
    "torch.nn.modules.rnn": "RNN LSTM GRU RNNCell LSTMCell GRUCell",
    "torch.nn.modules.transformer": "Transformer TransformerEncoder TransformerDecoder TransformerEncoderLayer "
                                    "TransformerDecoderLayer",
    "torch.optim.adadelta": "Adadelta", "torch.optim.adagrad": "Adagrad", "torch.optim.adam": "Adam",
    "torch.optim.adamw": "AdamW", "torch.optim.lbfgs": "LBFGS", "torch.optim.rmsprop": "RMSprop",
    "torch.optim.sgd": "SGD",
}
_DEFINED_IN = {name: module for module, names in _PYTORCH_MODULES.items() for name in names.split()}


type_tests.register(C.float_tensor, "Tensor", (Tensor,), "torch")  # isinstance(x, torch.Tensor)
type_tests.register(Node, "Node", (Node, AccumulateGrad), "torch.autograd.graph")  # covers every node


def _standard_modules() -> None:
    """`math`, `np.random` and `torch.save`/`load` are facades (lang/stdlib), reachable as Python, NumPy and
    PyTorch reach them."""
    from gradcli.lang.stdlib.math_module import MATH
    from gradcli.lang.stdlib.numpy_random import NUMPY_RANDOM
    from gradcli.lang.stdlib.saved_files import load, save
    MODULES["math"] = MATH
    NUMPY.members["random"] = NUMPY_RANDOM
    NUMPY.members["__version__"] = np.__version__
    TORCH.members.update(save=save, load=load)


_standard_modules()
