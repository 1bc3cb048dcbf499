"""The NumPy a program reaches: names, not code. Every function, ndarray method and attribute, random
function and Generator method listed here is NumPy's own, called through one dispatcher
(`dispatch.call`) that admits numeric arrays only and sizes a result before NumPy allocates it.

How the list was chosen: NumPy's documented routines for array creation, manipulation, mathematics,
statistics, sorting and searching, logic, set routines, linear algebra (`numpy.linalg`) and random
sampling, as published numeric and tutorial code calls them. Left out by kind, so they stay refused by
name: file and buffer I/O (`load`, `save*`, `fromfile`, `loadtxt`, `genfromtxt`, `frombuffer`,
`fromstring`, `tofile`, `tobytes`, `dump`), memory views (`ctypes`, `data`, `base`, `view`, `flags`,
`strides`, `may_share_memory`, `from_dlpack`), functions that call back into the program
(`vectorize`, `frompyfunc`, `apply_along_axis`, `piecewise`, `fromfunction`, `fromiter`), global state
other than printing (`seterr*`, `setbufsize`), strings, dates and objects (`array2string`,
`datetime_*`, `busday_*`), and the interpreter's own helpers (`info`, `test`, `show_config`).
"""
from __future__ import annotations

FUNCTIONS = frozenset("""
array asarray asanyarray ascontiguousarray copy zeros ones empty full zeros_like ones_like empty_like full_like
arange linspace logspace geomspace eye identity diag diagflat tri tril triu vander meshgrid indices ix_
reshape ravel squeeze expand_dims transpose swapaxes moveaxis rollaxis permute_dims matrix_transpose atleast_1d
atleast_2d atleast_3d broadcast_to broadcast_arrays broadcast_shapes concatenate concat stack vstack hstack dstack
column_stack row_stack block split array_split hsplit vsplit dsplit unstack tile repeat flip fliplr flipud roll rot90
pad append insert delete trim_zeros resize unique unique_counts unique_values unique_inverse shape ndim size astype
add subtract multiply divide true_divide floor_divide power float_power mod remainder fmod divmod negative positive
abs absolute fabs sign sqrt cbrt square reciprocal exp exp2 expm1 log log2 log10 log1p logaddexp logaddexp2 sin cos
tan arcsin arccos arctan arctan2 asin acos atan atan2 sinh cosh tanh arcsinh arccosh arctanh asinh acosh atanh hypot
deg2rad rad2deg degrees radians floor ceil trunc rint round around fix clip maximum minimum fmax fmin heaviside sinc
nan_to_num real imag conj conjugate angle copysign nextafter spacing modf ldexp frexp gcd lcm i0 interp convolve
correlate cross dot vdot inner outer matmul tensordot einsum kron trace diagonal gradient diff ediff1d cumsum cumprod
cumulative_sum cumulative_prod sum prod mean median average std var min max amin amax ptp percentile quantile
nansum nanprod nanmean nanmedian nanstd nanvar nanmin nanmax nanargmin nanargmax nancumsum nancumprod nanpercentile
nanquantile argmax argmin argsort sort lexsort partition argpartition searchsorted nonzero flatnonzero argwhere where
extract count_nonzero take take_along_axis put_along_axis choose select compress digitize bincount histogram
histogram_bin_edges histogram2d corrcoef cov all any isfinite isinf isnan isneginf isposinf signbit isclose allclose
array_equal array_equiv isreal iscomplex isscalar equal not_equal less less_equal greater greater_equal logical_and
logical_or logical_xor logical_not bitwise_and bitwise_or bitwise_xor bitwise_not invert left_shift right_shift
isin intersect1d union1d setdiff1d setxor1d polyfit polyval poly roots polyder polyint polyadd polysub polymul
tril_indices triu_indices diag_indices ravel_multi_index unravel_index fill_diagonal copyto place putmask
result_type promote_types can_cast issubdtype dtype set_printoptions get_printoptions trapezoid hamming hanning
blackman bartlett kaiser
""".split())
"""`np.NAME`: NumPy's functions."""

LINALG = frozenset("""
norm det inv pinv solve lstsq eig eigh eigvals eigvalsh svd svdvals qr cholesky slogdet matrix_rank matrix_power
cond multi_dot matrix_norm vector_norm tensorinv tensorsolve trace diagonal outer cross matmul
""".split())
"""`np.linalg.NAME`."""

NDARRAY_METHODS = frozenset("""
all any argmax argmin argpartition argsort astype clip compress conj conjugate copy cumprod cumsum diagonal dot fill
flatten item max mean min nonzero partition prod put ravel repeat reshape round searchsorted sort squeeze std sum
swapaxes take tolist trace transpose var
""".split())
"""`a.NAME(...)` on an ndarray."""

NDARRAY_ATTRIBUTES = frozenset({"shape", "ndim", "size", "dtype", "T", "mT", "itemsize", "nbytes", "real", "imag"})
"""`a.NAME` on an ndarray (values, not methods)."""

SCALAR_TYPES = ("bool_", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
                "float32", "float64", "complex64", "complex128", "intp", "longlong", "double", "single", "half",
                "short", "intc", "ubyte", "byte")
"""`np.float32` and kin: dtypes that, called, make NumPy's scalars."""

CONSTANTS = {"pi", "e", "inf", "nan", "euler_gamma", "newaxis"}

RANDOM_LEGACY = frozenset("""
seed rand randn random random_sample uniform normal standard_normal randint random_integers choice
shuffle permutation exponential standard_exponential binomial poisson beta gamma standard_gamma chisquare
standard_t laplace logistic lognormal multinomial multivariate_normal dirichlet geometric gumbel hypergeometric
negative_binomial pareto power rayleigh triangular vonmises wald weibull zipf standard_cauchy f noncentral_f
noncentral_chisquare logseries
""".split())
"""`np.random.NAME`: the legacy functions, drawn from one `RandomState` per run."""

GENERATOR_METHODS = frozenset("""
random integers normal uniform standard_normal choice shuffle permutation permuted exponential standard_exponential
binomial poisson beta gamma standard_gamma chisquare standard_t laplace logistic lognormal multinomial
multivariate_normal dirichlet geometric gumbel hypergeometric negative_binomial pareto power rayleigh triangular
vonmises wald weibull zipf standard_cauchy f noncentral_f noncentral_chisquare logseries
""".split())
"""`np.random.default_rng(seed).NAME`: NumPy's `Generator` methods."""

REFUSED = {
    "load": "file I/O", "save": "file I/O", "savez": "file I/O", "savez_compressed": "file I/O",
    "loadtxt": "file I/O", "savetxt": "file I/O", "genfromtxt": "file I/O", "fromfile": "file I/O",
    "fromregex": "file I/O", "tofile": "file I/O", "dump": "file I/O", "dumps": "object serialisation",
    "memmap": "file I/O", "frombuffer": "raw buffers", "fromstring": "raw buffers", "tobytes": "raw buffers",
    "getbuffer": "raw buffers", "ctypes": "ctypes", "data": "raw buffers", "base": "memory views",
    "view": "memory views", "from_dlpack": "memory views", "vectorize": "calling back into the program",
    "frompyfunc": "calling back into the program", "apply_along_axis": "calling back into the program",
    "apply_over_axes": "calling back into the program", "piecewise": "calling back into the program",
    "fromfunction": "calling back into the program", "fromiter": "calling back into the program",
    "object_": "object arrays", "object": "object arrays", "lib": "NumPy's internals", "ctypeslib": "ctypes",
}
"""Names a program might reach for that stay refused, with the reason the error gives."""

SIZE = sum(map(len, (FUNCTIONS, LINALG, NDARRAY_METHODS, NDARRAY_ATTRIBUTES, SCALAR_TYPES, CONSTANTS,
                     RANDOM_LEGACY, GENERATOR_METHODS)))
