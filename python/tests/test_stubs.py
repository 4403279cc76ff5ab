"""The type stubs (s3wire/_s3wire.pyi) against the built module: the same classes, each
public method in both, with the same parameters (names, kinds, which have defaults), and
a docstring on every public class and method of the module."""

import ast
import inspect
import pathlib

import s3wire
import s3wire._s3wire as native

STUB = pathlib.Path(s3wire.__file__).with_name("_s3wire.pyi")
KIND = {
    "posonly": inspect.Parameter.POSITIONAL_ONLY,
    "args": inspect.Parameter.POSITIONAL_OR_KEYWORD,
    "kwonly": inspect.Parameter.KEYWORD_ONLY,
}


def stub_classes():
    tree = ast.parse(STUB.read_text())
    classes = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and hasattr(native, node.name):
            classes[node.name] = {
                item.name: item
                for item in node.body
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
            }
    return classes


def stub_parameters(function):
    arguments = function.args
    params = []
    positional = arguments.posonlyargs + arguments.args
    defaults = [None] * (len(positional) - len(arguments.defaults)) + arguments.defaults
    for kind, argument, default in zip(
        ["posonly"] * len(arguments.posonlyargs) + ["args"] * len(arguments.args), positional, defaults
    ):
        params.append((argument.arg, KIND[kind], default is not None))
    for argument, default in zip(arguments.kwonlyargs, arguments.kw_defaults):
        params.append((argument.arg, KIND["kwonly"], default is not None))
    return params[1:]  # self


def runtime_parameters(function):
    return [
        (name, parameter.kind if parameter.kind != inspect.Parameter.POSITIONAL_ONLY else KIND["args"], parameter.default is not inspect.Parameter.empty)
        for name, parameter in inspect.signature(function).parameters.items()
        if name not in ("self", "$self")
    ]


def public_methods(cls):
    return {
        name
        for name, value in vars(cls).items()
        if not name.startswith("_") and callable(value)
    }


def test_every_native_class_has_a_stub_with_its_methods():
    classes = stub_classes()
    exported = {name for name in dir(native) if isinstance(getattr(native, name), type) and not name.startswith("_")}
    assert set(classes) == exported
    for name, methods in classes.items():
        cls = getattr(native, name)
        stubbed = {method for method in methods if not method.startswith("_")}
        properties = {method for method, node in methods.items() if any(getattr(d, "id", None) == "property" for d in node.decorator_list)}
        assert public_methods(cls) == stubbed - properties, name
        for method in properties:
            assert hasattr(cls, method), f"{name}.{method}"


def test_stub_signatures_match_the_module():
    for name, methods in stub_classes().items():
        cls = getattr(native, name)
        for method, node in methods.items():
            if method.startswith("__") and method != "__init__":
                continue
            if any(getattr(d, "id", None) == "property" for d in node.decorator_list):
                continue
            runtime = cls if method == "__init__" else getattr(cls, method)
            if method == "__init__":
                runtime_params = runtime_parameters(cls)
            else:
                runtime_params = runtime_parameters(runtime)
            # pyo3 marks the parameters before `*` positional-or-keyword, as the stub does;
            # an argument that came out positional-only in either is compared as such.
            assert stub_parameters(node) == runtime_params, f"{name}.{method}"


def test_public_classes_and_methods_have_docstrings():
    for name in ("Client", "AsyncClient", "StreamingBody", "Listing", "Pages"):
        cls = getattr(native, name)
        assert cls.__doc__ and cls.__doc__.strip(), name
        for method in public_methods(cls):
            assert getattr(cls, method).__doc__, f"{name}.{method} has no docstring"
    assert (pathlib.Path(s3wire.__file__).with_name("py.typed")).exists()
