"""A program's classes: `class Net(nn.Module)`, `class Cube(torch.autograd.Function)`, plain classes.

A program's class is a `UserClass` (a `ProgramType`, never a Python class the program can hold);
behind it stands a Python type built with `type(name, bases, namespace)` over the tree's methods,
so Python's own method resolution, `super()` and special-method protocols do the work, and
gradcli's bases (`nn.Module`, `autograd.Function`, ...) run their engine code on it unchanged. The
namespace holds only wrappers that call the program's functions back through the interpreter,
so everything a class runs (methods, properties, `__repr__`, a `backward` the engine calls) is a
call of a program function: budgeted, depth-limited, with its errors placed in the method.

What a program reads on an object is decided here, by name: the attributes it set itself, the
names its classes define, and the documented API of its gradcli base (`BASE_MEMBERS`). Its own
`_names` are the program's, on plain classes and on subclasses of gradcli's bases alike, except the
ones a gradcli base uses (`own_names`); dunders never get this far (the parser refuses them), except
the class view (`obj.__class__`) and the listed special methods read through `super()`.
"""
from __future__ import annotations

import ast
import functools
from typing import Any, Callable

from gradcli.engine import function as AF
from gradcli.errors import ArgumentError, LimitError, NameLookupError, NotAllowedError
from gradcli.lang.limits import MAX_MRO
from gradcli.lang import own_names
from gradcli.lang.class_syntax import SPECIAL_METHODS, is_private
from gradcli.lang.objects import Instance
from gradcli.lang.exceptions import ProgramType, RaisedError
from gradcli.lang import library
from gradcli.lang.library import LibraryType, deferred, registered
from gradcli.lang.user_functions import UserFunction


class UserClass(ProgramType):
    """A class of the program: calling it makes an instance; its attributes are its own names and its base's API."""

    def __init__(self, name: str, pytype: type, bases: tuple[ProgramType, ...], doc: str | None) -> None:
        self.name = self.__name__ = name
        self.pytype = pytype
        self.bases = bases
        self.doc = doc
        self.own: frozenset[str] = frozenset().union(*(getattr(t, "_gradcli_names", ()) for t in pytype.__mro__))

    @property
    def base_members(self) -> frozenset[str]:
        return _base_members(self.pytype)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if issubclass(self.pytype, AF.Function):
            raise NotAllowedError(f"{self.name} is an autograd.Function: call {self.name}.apply(...)",
                                  hint="a Function is never instantiated; apply runs its forward and records it")
        try:
            return self.pytype(*args, **kwargs)
        except TypeError as exc:
            if "argument" not in str(exc):
                raise
            raise ArgumentError(f"{self.name}(): {exc}".replace("Instance.__init__()", f"{self.name}()"),
                                hint=f"give {self.name}(...) the arguments its __init__ takes") from None

    def covers(self, value: Any) -> bool:
        return isinstance(value, self.pytype)

    def __repr__(self) -> str:
        return f"<class '__main__.{self.name}'>"


class BaseClass(ProgramType):
    """One of gradcli's classes a program may subclass: `nn.Module`, `torch.autograd.Function`, ..."""

    def __init__(self, name: str, pytype: type | LibraryType, make: Callable[..., Any] | None = None,
                 module: str = "") -> None:
        self.name = self.__name__ = name
        self._pytype = pytype
        self.make = make
        self.bases = ()
        self.module = module
        """Where PyTorch (or Python) defines the class, for its printed text: `torch.nn.modules.module`."""

    @property
    def pytype(self) -> type:
        """The class, its library package imported when first asked (to subclass it, to print it)."""
        if isinstance(self._pytype, LibraryType):
            self._pytype = self._pytype.load()
        return self._pytype

    @property
    def base_members(self) -> frozenset[str]:
        return _base_members(self.pytype)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.make is None:
            raise NotAllowedError(f"{self.name} is a base class: subclass it", hint=f"class Mine({self.name}): ...")
        return self.make(*args, **kwargs)

    def covers(self, value: Any) -> bool:
        return isinstance(value, self._pytype)

    def __repr__(self) -> str:
        return f"<class '{self.module + '.' if self.module else ''}{self.name}'>"


class _Object:
    """The base `object` stands for."""


OBJECT = BaseClass("object", _Object)
MODULE = BaseClass("Module", LibraryType("gradcli.nn.modules", "Module"), deferred("gradcli.nn.modules", "Module"),
                   "torch.nn.modules.module")
FUNCTION = BaseClass("Function", AF.Function, module="torch.autograd.function")
OPTIMIZER = BaseClass("Optimizer", LibraryType("gradcli.optim.optimizers", "Optimizer"), module="torch.optim.optimizer")
LR_SCHEDULER = BaseClass("LRScheduler", LibraryType("gradcli.optim.lr_scheduler", "LRScheduler"),
                         module="torch.optim.lr_scheduler")
DATASET = BaseClass("Dataset", LibraryType("gradcli.data.loading", "Dataset"), module="torch.utils.data.dataset")
ITERABLE_DATASET = BaseClass("IterableDataset", LibraryType("gradcli.data.loading", "IterableDataset"),
                             module="torch.utils.data.dataset")


class Super:
    """`super()` / `super(Cls, self)`: the next class's attributes after `start` in `obj`'s type."""

    def __init__(self, start: type, obj: Any) -> None:
        self.start, self.obj = start, obj

    def attribute(self, attr: str) -> Any:
        value = getattr(super(self.start, self.obj), attr, None)
        if value is None:
            raise NameLookupError(f"'super' object has no attribute '{attr}'")
        if attr == "__init__" and getattr(value, "__objclass__", None) is object:
            return _object_init
        return value


def _object_init(*args: Any, **kwargs: Any) -> None:
    if args or kwargs:
        raise ArgumentError("object.__init__() takes exactly one argument (the instance to initialize)")


class SuperFunction:
    """The `super` a method sees: it knows the class the method was defined in and the method's first
    parameter (Python's `__class__` cell), so `super()` needs no frame inspection."""

    __name__ = "super"

    def __init__(self, interpreter: Any, body: Any) -> None:
        self.interpreter = interpreter
        self.body = body
        self.defined_in: type | None = None

    def __call__(self, *args: Any) -> Super:
        if len(args) == 2:
            cls, obj = args
            if not isinstance(cls, (UserClass, BaseClass)) or not isinstance(obj, cls.pytype):
                raise ArgumentError("super(type, obj): obj must be an instance or subtype of type")
            return Super(cls.pytype, obj)
        if args:
            raise ArgumentError("super() takes no arguments or two (super(Net, self))")
        scope = self.interpreter.scope
        while scope is not None and scope.parent is not self.body:
            scope = scope.parent
        if self.defined_in is None or scope is None or not scope.values:
            raise ArgumentError("super(): no arguments", hint="call super() inside a method of a class")
        first = next(iter(scope.values.values()))  # a call's locals start with its parameters, in order
        if not isinstance(first, self.defined_in):
            raise ArgumentError("super(obj): obj must be an instance or subtype of type")
        return Super(self.defined_in, first)


def _outside(*args: Any) -> Super:
    if len(args) == 2 and isinstance(args[0], (UserClass, BaseClass)) and isinstance(args[1], args[0].pytype):
        return Super(args[0].pytype, args[1])
    raise ArgumentError("super(): no arguments", hint="call super() inside a method of a class, or "
                                                      "super(Cls, obj)")


class StaticMethod:
    def __init__(self, fn: Any) -> None:
        self.fn = fn


class ClassMethod:
    def __init__(self, fn: Any) -> None:
        self.fn = fn


class Property:
    """`@property`, with `@name.setter`: a getter and a setter of the program."""

    def __init__(self, fget: Any = None, fset: Any = None) -> None:
        self.fget, self.fset = fget, fset

    def setter(self, fset: Any) -> "Property":
        return Property(self.fget, fset)

    def getter(self, fget: Any) -> "Property":
        return Property(fget, self.fset)


def _marker(kind: type, name: str) -> Callable[[Any], Any]:
    def mark(fn: Any = None, *more: Any) -> Any:
        if not callable(fn) or more:
            raise ArgumentError(f"{name}() takes one function", hint=f"write @{name} above a def")
        return kind(fn)
    mark.__name__ = name
    return mark


BUILTINS = {"staticmethod": _marker(StaticMethod, "staticmethod"), "classmethod": _marker(ClassMethod, "classmethod"),
            "property": _marker(Property, "property"), "super": _outside, "object": OBJECT,
            "NotImplemented": NotImplemented}
"""The Python builtins classes bring, by their Python names (a method's own `super` shadows this one)."""

OWNERS = (Instance, UserClass, BaseClass, Super, Property, AF.FunctionCtx)
"""The values whose attributes `attribute` decides (the interpreter asks here for these)."""
SETTABLE = (Instance, UserClass, AF.FunctionCtx, library.Module)
"""The values whose attributes a program may assign (`set_attribute` decides which)."""


def define(interpreter: Any, node: Any, bases: list[Any], body: Callable[[], Any]) -> UserClass:
    """Run a class body in a scope of its own and make the class of what it bound.

    The methods are made in that scope, which is emptied afterwards: a method sees the names around
    the class (as in Python, not the class's attributes), and above them the `super` of its class.
    """
    from gradcli.lang.user_functions import Scope
    holder = Scope({}, frozenset(), interpreter.scope)
    class_scope = Scope({}, frozenset(), holder)
    sup = SuperFunction(interpreter, class_scope)
    holder.values["super"] = sup
    outer, interpreter.scope = interpreter.scope, class_scope
    try:
        body()
    finally:
        interpreter.scope = outer
    values = dict(class_scope.values)
    class_scope.values.clear()
    first = node.body[0] if node.body else None
    doc = first.value.value if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and \
        isinstance(first.value.value, str) else None
    return make_class(interpreter, node.name, bases, values, doc, sup, node)


def make_class(interpreter: Any, name: str, bases: list[Any], values: dict[str, Any], doc: str | None,
               sup: SuperFunction, node: ast.ClassDef | None = None) -> UserClass:
    """The class a `class` statement defines, from its evaluated bases and body."""
    py_bases: list[type] = []
    program_bases: list[ProgramType] = []
    for k, base in enumerate(bases or [OBJECT]):
        if not isinstance(base, (UserClass, BaseClass)):
            written = [ast.get_source_segment(interpreter.source, b) or "" for b in node.bases] if node else []
            what = f"'{written[k]}'" if k < len(written) and written[k] else _described(base)
            raise NotAllowedError(f"cannot subclass {what}",
                                  hint="a class may derive from object, nn.Module, torch.autograd.Function, "
                                       "torch.optim.Optimizer, torch.utils.data.Dataset / IterableDataset "
                                       "or a class of the program")
        program_bases.append(base)
        if base is not OBJECT:
            py_bases.append(base.pytype)
    depth = 1 + max((len(b.__mro__) - (Instance in b.__mro__) for b in py_bases), default=1)  # as Python counts
    if depth > MAX_MRO:
        raise LimitError(f"class {name} would have {depth:,} classes in its method resolution order, over the limit "
                         f"of {MAX_MRO:,}", hint="a chain of subclasses this deep costs Python work for each new "
                                                 "one; derive from fewer classes")
    if not any(issubclass(b, Instance) for b in py_bases):
        py_bases.insert(0, Instance)
    inherited = frozenset().union(*(b.own for b in program_bases if isinstance(b, UserClass)))
    gradcli_own = frozenset().union(*(own_names.reserved(b) for b in py_bases if not plain(b)))
    taken = sorted(n for n in set(values) | inherited if is_private(n) and n in gradcli_own)
    if taken:
        raise NotAllowedError(f"'{taken[0]}' is a name gradcli's own base class uses: a subclass of a gradcli class "
                              f"cannot define it", hint=_PRIVATE_HINT)
    namespace: dict[str, Any] = {name_: _python_value(value) for name_, value in values.items()}
    namespace["_gradcli_names"] = frozenset(values)
    namespace["__module__"] = "__main__"
    namespace["__doc__"] = doc
    try:
        pytype = type(name, tuple(py_bases), namespace)
    except TypeError as exc:
        raise NotAllowedError(f"cannot create class {name}: {exc}",
                              hint="derive from one gradcli base and from classes of the program") from None
    cls = UserClass(name, pytype, tuple(program_bases), doc)
    pytype._gradcli_class = cls
    sup.defined_in = pytype
    if issubclass(pytype, AF.Function):
        AF.check_definition(pytype)
    return cls


def _python_value(value: Any) -> Any:
    """What the Python type holds for a body's name: methods bind as Python's do."""
    if isinstance(value, StaticMethod):
        return staticmethod(value.fn)
    if isinstance(value, ClassMethod):
        return _ClassBound(value.fn)
    if isinstance(value, Property):
        return property(None if value.fget is None else _method(value.fget),
                        None if value.fset is None else _method(value.fset))
    if isinstance(value, UserFunction):
        return _next(value) if value.__name__ == "__next__" else _method(value)
    return value


def _method(fn: Any) -> Callable[..., Any]:
    """A Python function around a program's function, so that an instance binds it as `self`."""
    @functools.wraps(fn, assigned=("__name__",), updated=())
    def method(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)
    return method


def _next(fn: Any) -> Callable[..., Any]:
    """`__next__`: the program's `raise StopIteration` ends Python's iteration, as in Python."""
    def method(*args: Any) -> Any:
        try:
            return fn(*args)
        except RaisedError as exc:
            if exc.value.type.name == "StopIteration":
                raise StopIteration from None
            raise
    method.__name__ = "__next__"
    return method


class _ClassBound:
    """`@classmethod`: binds the program's class (a `UserClass`), never the Python type behind it."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def __get__(self, obj: Any, owner: type | None = None) -> Callable[..., Any]:
        cls = (owner or type(obj))._gradcli_class
        return functools.partial(self.fn, cls)


_PRIVATE_HINT = ("gradcli's nn.Module, Function, Optimizer and Dataset keep their own state under some names "
                 "starting with '_' (_parameters, _modules, ...): choose another name for yours")


def plain(pytype: type) -> bool:
    """A class of the program's that derives from no gradcli class (micrograd's Value): its objects
    hold only what the program gives them, so their `_names` are the program's own."""
    return all(t in (Instance, object) or "_gradcli_class" in vars(t) for t in pytype.__mro__)


def _private_refused(owner: Any, attr: str) -> bool:
    """A `_name` on anything but a program's object or class, or one its gradcli base keeps its state under."""
    if not attr.startswith("_") or attr.startswith("__"):
        return False
    pytype = owner.pytype if isinstance(owner, UserClass) else type(owner.obj) if isinstance(owner, Super) else \
        type(owner)
    return not (is_private(attr) and isinstance(owner, (Instance, UserClass, Super)) and not hasattr(Instance, attr)
                and (plain(pytype) or attr not in own_names.reserved(pytype)))


def attribute(owner: Any, attr: str) -> Any:
    """`owner.attr` for a program's object or class, `super()` or a property, by the names allowed on it."""
    if _private_refused(owner, attr):
        raise NotAllowedError(f"attribute '{attr}' is not available", hint=_PRIVATE_HINT)
    if isinstance(owner, Super):
        if attr in SPECIAL_METHODS or _allowed_on(type(owner.obj), attr, owner.obj):
            return owner.attribute(attr)
    elif isinstance(owner, AF.FunctionCtx):
        if attr in AF.CTX_MEMBERS or attr in owner.__dict__:
            return getattr(owner, attr)
    elif isinstance(owner, Property):
        if attr in ("setter", "getter"):
            return getattr(owner, attr)
    elif isinstance(owner, (UserClass, BaseClass)):
        if attr in getattr(owner, "own", ()) or attr in owner.base_members:
            return getattr(owner.pytype, attr)
    elif _allowed_on(type(owner), attr, owner):
        try:
            return getattr(owner, attr)
        except AttributeError:
            pass
    what = owner.name if isinstance(owner, (UserClass, BaseClass)) else \
        "super" if isinstance(owner, Super) else type(owner).__name__
    raise NameLookupError(f"'{what}' object has no attribute '{attr}'",
                          hint="set it first (self.name = value in __init__), or define it in the class")


def _allowed_on(pytype: type, attr: str, obj: Any) -> bool:
    cls = getattr(pytype, "_gradcli_class", None)
    if cls is not None and attr in cls.own:
        return True
    if attr in getattr(obj, "__dict__", {}):
        return True
    if isinstance(obj, library.Module) and registered(obj, attr):
        return True
    return attr in _base_members(pytype)


def set_attribute(owner: Any, attr: str, value: Any) -> None:
    """`owner.attr = value` on a program's object or class (a Module registers parameters and modules)."""
    target = owner.pytype if isinstance(owner, UserClass) else owner
    if _private_refused(owner, attr):
        raise NotAllowedError(f"assignment to attribute '{attr}' is not supported", hint=_PRIVATE_HINT)
    if isinstance(owner, AF.FunctionCtx) and attr in AF.CTX_MEMBERS or isinstance(owner, library.Module) and \
            not registered_or_new(owner, attr):
        raise NotAllowedError(f"cannot assign to attribute '{attr}' of {_described(owner)}",
                              hint=f"'{attr}' is part of the object's API; choose another name")
    if isinstance(owner, Instance) and attr in type(owner).__dict__.get("_gradcli_names", ()) and \
            isinstance(getattr(type(owner), attr, None), property) and getattr(type(owner), attr).fset is None:
        raise NotAllowedError(f"property '{attr}' of '{type(owner).__name__}' object has no setter",
                              hint=f"define one with @{attr}.setter")
    try:
        setattr(target, attr, _python_value(value) if isinstance(owner, UserClass) else value)
    except AttributeError as exc:
        raise NotAllowedError(f"cannot assign to attribute '{attr}': {exc}") from None


def registered_or_new(module: Any, attr: str) -> bool:
    """Whether assigning `attr` on a module keeps gradcli's own methods intact: a registered name, an
    attribute the program set, or a name the module's gradcli class does not define."""
    base = next(t for t in type(module).__mro__ if not issubclass(t, Instance) or t is Instance)
    if base is Instance:
        base = MODULE.pytype
    return registered(module, attr) or attr in module.__dict__ or not hasattr(base, attr) or \
        attr in getattr(getattr(type(module), "_gradcli_class", None), "own", ())


@functools.cache
def _base_members(pytype: type) -> frozenset[str]:
    names: set[str] = set()
    for base, members in ((library.Module, MODULE_ATTRIBUTES), (library.Optimizer, OPTIMIZER_MEMBERS),
                          (library.LRScheduler, SCHEDULER_MEMBERS),
                          (AF.Function, FUNCTION_MEMBERS)):
        if issubclass(pytype, base):
            names |= members
    return frozenset(names)


MODULE_ATTRIBUTES = frozenset({
    "parameters", "named_parameters", "children", "named_children", "modules", "named_modules", "buffers",
    "named_buffers", "zero_grad", "train", "eval", "training", "requires_grad_", "forward", "state_dict",
    "load_state_dict", "add_module", "register_module", "register_buffer", "register_parameter",
    "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
    "register_full_backward_pre_hook", "register_backward_hook", "apply", "to", "cpu", "double", "float", "half", "bfloat16",
    "extra_repr"})
"""nn.Module's API as a program reads it, on built-in modules and the program's own."""
OPTIMIZER_MEMBERS = frozenset({"step", "zero_grad", "param_groups", "state", "defaults", "add_param_group",
                               "state_dict", "load_state_dict"})
FUNCTION_MEMBERS = frozenset({"apply", "forward", "backward", "setup_context", "jvp", "vjp"})
SCHEDULER_MEMBERS = frozenset({"step", "get_lr", "get_last_lr", "last_epoch", "base_lrs", "optimizer"})
"""A learning-rate scheduler's API as a program reads it, on gradcli's schedulers and the program's own."""


def _described(value: Any) -> str:
    if isinstance(value, ProgramType):
        return f"'{value.name}'"
    name = getattr(value, "__name__", None) if callable(value) else None
    return f"'{name.rstrip('_')}'" if isinstance(name, str) else "a function" if callable(value) else \
        f"a {type(value).__name__}"
