"""The house: packages import in one direction, and every module imports on its own.

The order below is the architecture (`docs/architecture.md`): a package may import only the
packages of the layers before its own — never a sibling in its layer, never one above. The
graph is read from the source (imports under ``TYPE_CHECKING`` too), so an arrow added against
it fails here, not in a later refactoring.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"

LAYERS: list[tuple[str, ...]] = [
    ("errors", "enums"),
    ("clock", "context", "dto", "inputs", "agents"),
    ("models",),  # messages, the provider protocols, the providers
    ("records",),  # what is stored and returned: steps, pauses, outputs
    ("store",),  # the protocol, the writes, the SQL stores
    ("observability",),
    ("pii", "policies", "flow", "mcp"),  # values the decorators take
    ("components",),  # the decorators and their specs
    ("interpreters",),
    ("assembly",),  # the checks and the container
    ("engine",),  # passes, leases, the steps inside a pass
    ("pauses", "audit"),  # operations on answers, the inbox; the decision log read and verified
    ("app",),
    ("http",),  # what every HTTP route stands on: problem bodies, careful bodies, the app
    ("web", "cli", "testing"),
    ("slack", "protocols"),  # a channel's route; the open protocols' doors: on the HTTP ground
]


def _modules() -> dict[str, tuple[Path, bool]]:
    found: dict[str, tuple[Path, bool]] = {}
    for path in (SRC / "agboss").rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        found[".".join(parts)] = (path, is_package)
    return found


def _package(module: str) -> str:
    """The first level under agboss (a top-level module is a package of its own)."""
    return module.split(".")[1] if "." in module else ""


@functools.cache  # each file parsed once for the whole module's tests, not once a question
def _imports(module: str, path: Path, is_package: bool) -> frozenset[str]:
    here = module.split(".") if is_package else module.split(".")[:-1]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(here[: len(here) - node.level + 1] + ([base] if base else []))
            targets.add(base)
            targets.update(f"{base}.{alias.name}" for alias in node.names)
    return frozenset(target for target in targets if target.startswith("agboss."))


def package_edges() -> dict[tuple[str, str], list[str]]:
    """Each arrow between two packages, with the imports that draw it."""
    modules = _modules()
    edges: dict[tuple[str, str], list[str]] = {}
    for module, (path, is_package) in modules.items():
        source = _package(module)
        if not source:  # agboss/__init__ re-exports the public names of every layer
            continue
        for target in _imports(module, path, is_package):
            known = max((m for m in modules if target == m or target.startswith(m + ".")), key=len)
            destination = _package(known)
            if destination and destination != source:
                edges.setdefault((source, destination), []).append(f"{module} → {target}")
    return edges


def test_every_package_has_a_layer() -> None:
    layered = {name for layer in LAYERS for name in layer}
    packages = {_package(module) for module in _modules()} - {""}
    assert packages - layered == set(), "add the new package to LAYERS (and the docs' table)"
    assert layered - packages == set(), "a package in LAYERS no longer exists"


def arrows_against(edges: dict[tuple[str, str], list[str]]) -> list[str]:
    """The arrows that point to the package's own layer or one above it."""
    layer_of = {name: index for index, layer in enumerate(LAYERS) for name in layer}
    return [
        f"{source} → {destination}: {', '.join(sorted(imports))}"
        for (source, destination), imports in sorted(edges.items())
        if layer_of[destination] >= layer_of[source]
    ]


def test_packages_import_only_the_layers_before_their_own() -> None:
    assert arrows_against(package_edges()) == []


def test_an_arrow_up_or_to_a_sibling_is_against_the_order() -> None:
    edges = package_edges()
    assert ("engine", "store") in edges  # the reader sees real imports
    assert arrows_against({("store", "engine"): ["agboss.store.x → agboss.engine.y"]}) != []
    assert arrows_against({("pii", "flow"): ["agboss.pii.x → agboss.flow.y"]}) != []


def test_the_package_graph_has_no_cycle() -> None:
    edges: dict[str, set[str]] = {}
    for source, destination in package_edges():
        edges.setdefault(source, set()).add(destination)
    done: set[str] = set()

    def cycle_from(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return None
        for following in sorted(edges.get(node, ())):
            found = cycle_from(following, [*path, node])
            if found:
                return found
        done.add(node)
        return None

    cycles = [found for node in sorted(edges) if (found := cycle_from(node, []))]
    assert cycles == []


def _reached_from(start: str) -> set[str]:
    """The modules ``start`` imports, directly or through others (``TYPE_CHECKING`` too)."""
    edges = _module_edges()
    reached: set[str] = set()
    todo = [start]
    while todo:
        for found in edges[todo.pop()]:
            if found not in reached:
                reached.add(found)
                todo.append(found)
    return reached


@functools.cache
def _module_edges() -> dict[str, frozenset[str]]:
    """Each module's imports, as the modules they name (the longest module a target is in)."""
    modules = _modules()

    def known(target: str) -> str | None:
        found = [m for m in modules if target == m or target.startswith(m + ".")]
        return max(found, key=len) if found else None

    return {
        module: frozenset(
            found
            for target in _imports(module, path, is_package)
            if (found := known(target)) is not None
        )
        for module, (path, is_package) in modules.items()
    }


def test_the_step_machine_and_the_rules_around_a_call_never_import_the_agent_back() -> None:
    # The agent's run hands the step machine values (a step, a policy, the rule for a call in
    # doubt); what it calls reaches no module that imports it, not even for a type.
    for module in (
        "agboss.engine.steps._steps",
        "agboss.engine.steps._tool_results",
        "agboss.engine.steps._interrupted",
        "agboss.engine.steps._tool_input",
    ):
        assert "agboss.engine.runs._agent" not in _reached_from(module), module
    reached = _reached_from("agboss.engine.runs._agent")
    assert "agboss.engine.runs._agent" not in reached, "a module the agent's run imports imports it"


_LEASE_MAKERS = frozenset({"Lease", "AcquireLease", "RenewLease", "ReleaseLease"})
"""What takes, renews, releases or holds a tree's lease."""


def lease_makers(modules: dict[str, tuple[Path, bool]]) -> list[str]:
    """The places outside the engine (and the store that implements the writes, and its
    contract) that build a lease or a lease write."""
    found = []
    for module, (path, _) in sorted(modules.items()):
        if _package(module) in ("engine", "store") or module.startswith("agboss.testing.store_"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in _LEASE_MAKERS
            ):
                found.append(f"{module}:{node.lineno} {node.func.id}(...)")
    return found


def test_only_the_engine_builds_a_lease_or_a_lease_write() -> None:
    assert lease_makers(_modules()) == []


def test_a_lease_built_outside_the_engine_is_found(tmp_path: Path) -> None:
    stray = tmp_path / "answering.py"
    stray.write_text("def f(fence):\n    return ReleaseLease(fence)\n")
    assert lease_makers({"agboss.pauses._answering": (stray, False)}) == [
        "agboss.pauses._answering:2 ReleaseLease(...)"
    ]


PUBLIC_MODULES = {
    # the values every layer shares
    "agboss.clock",
    "agboss.context",
    "agboss.dto",
    "agboss.enums",
    "agboss.errors",
    "agboss.inputs",
    "agboss.interpreters",
    # what a third-party store implements and is checked with
    "agboss.store.protocol",
    "agboss.store.writes",
    "agboss.testing.pytest_plugin",  # pytest's entry point
}
"""The modules public by path; every other is a package (its ``__init__`` re-exports what is
public) or ``_``-prefixed somewhere in its path."""


def test_internal_modules_are_private_by_path() -> None:
    public = {
        module
        for module, (_, is_package) in _modules().items()
        if not is_package and not any(part.startswith("_") for part in module.split("."))
    }
    assert public == PUBLIC_MODULES


# One interpreter loads the third-party libraries and agboss, then forks a child per module
# that `import agboss` did not load, which imports it first: at a fraction of a fresh start.
_EACH_ALONE = """
import os, sys, traceback
import pydantic, httpx, opentelemetry.trace, stdnum, phonenumbers, sqlite3  # noqa: F401
for name in (
    "psycopg", "psycopg_pool", "starlette", "starlette.routing", "click", "rich",
    "rich.table", "openai", "anthropic", "mcp", "mcp.client.session", "slack_sdk",
    "slack_sdk.web.async_client", "aiohttp", "jsonschema", "opentelemetry.sdk",
    "ag_ui.core", "ag_ui.encoder", "a2a.server.request_handlers", "a2a.server.routes",
    "a2a.server.tasks", "a2a.helpers", "mcp.server.lowlevel", "mcp.server.request_state",
):
    try:
        __import__(name)
    except ImportError:
        pass
assert not any(m == "agboss" or m.startswith("agboss.") for m in sys.modules)
# A submodule's import runs agboss/__init__ first, loading the same modules in the same order
# whichever is asked for: a fresh interpreter that imports any module is, once agboss/__init__
# ran, this one. So this process imports agboss once, and each module it did not load is
# imported first in a child forked from it.
try:
    import agboss  # noqa: F401
except BaseException:
    last = traceback.format_exc().strip().splitlines()[-1]
    sys.stdout.write(f"agboss: {last}\\n")
    sys.stdout.flush()
    sys.exit(1)
loaded = {m for m in sys.modules if m == "agboss" or m.startswith("agboss.")}
cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
running = 0
for module in [name for name in sys.argv[1:] if name not in loaded]:
    if running == (cores or 1):  # the cores this process may use, each one busy
        os.wait()
        running -= 1
    if os.fork() == 0:
        try:
            __import__(module)
        except BaseException:
            last = traceback.format_exc().strip().splitlines()[-1]
            sys.stdout.write(f"{module}: {last}\\n")
            sys.stdout.flush()
            os._exit(1)
        os._exit(0)
    running += 1
while running:
    os.wait()
    running -= 1
"""


@pytest.mark.timeout(180)  # measured: ~6 s alone, ~10 s with the suite on 2 busy cores
def test_every_module_imports_first_in_a_fresh_interpreter() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _EACH_ALONE, *sorted(_modules())],
        capture_output=True,
        text=True,
        timeout=170,  # within the test's own limit: a hang fails the test, not the run
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == []


def test_a_module_that_fails_alone_is_reported() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _EACH_ALONE, "agboss.no_such_module", "agboss.errors"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.splitlines() == [
        "agboss.no_such_module: ModuleNotFoundError: No module named 'agboss.no_such_module'"
    ]


def test_only_the_engine_writes_to_the_store() -> None:
    # Answer, vote, cancel, retry, allow and revoke are the engine's doors: nothing else
    # calls a store's write (the store and the test kit's contract suite aside).
    writers = set()
    for module, (path, _) in _modules().items():
        if module.startswith(("agboss.engine", "agboss.store", "agboss.testing")):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "write"
                and ast.unparse(node.func.value).endswith("store")
            ):
                writers.add(module)
    assert writers == set(), sorted(writers)


def test_what_an_instance_keeps_lives_in_the_engines_memory_and_the_store_only_stores() -> None:
    # The questions it asked, the pending entries it listed or inserted and the outlines of
    # the trees it moved are bounded in one place (`engine/instance/_memory.py`, its
    # questions in `engine/instance/_asked.py`); a store keeps nothing of what it wrote or
    # read. (A PII policy's map of the values it found in one tree is that tree's, not the
    # instance's; an A2A agent's tasks are the A2A SDK's, which its request handler keeps in
    # memory — bounded by keep_tasks, an open one read again from the store.)
    keeping = {
        module
        for module, (path, _) in _modules().items()
        if "OrderedDict" in path.read_text() or "lru_cache" in path.read_text()
    }
    assert keeping <= {
        "agboss.engine.instance._memory",
        "agboss.engine.instance._asked",
        "agboss.pii._policy",
        "agboss.protocols.a2a._tasks",
    }
    assert not any(module.startswith("agboss.store") for module in keeping)


def _owner(module: str) -> str:
    """The package whose private part ``module`` is: the path up to its first ``_`` part
    (``agboss.engine.trees._lease`` → ``agboss.engine.trees``); a public module is no one's."""
    parts = module.split(".")
    private = [index for index, part in enumerate(parts) if part.startswith("_")]
    return ".".join(parts[: private[0]]) if private else ""


def private_imports(modules: dict[str, tuple[Path, bool]]) -> list[str]:
    """Each import, in ``modules``, of a private module of a package the importer is not in."""
    found = []
    for module, (path, is_package) in modules.items():
        inside = module if is_package else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.ImportFrom) and node.module):
                continue
            owner = _owner(node.module)
            if (
                node.module.startswith("agboss.")
                and owner
                and inside != owner
                and not inside.startswith(owner + ".")
            ):
                found.append(f"{module} imports {node.module}")
    return found


def test_no_module_imports_a_private_module_of_another_package() -> None:
    # Each package exports from its ``__init__`` what the others use; its private modules are
    # its own. A package whose ``__init__`` is the user's (`agboss.web`, `agboss.mcp`) has
    # that ground in an internal package (`agboss.http`, `agboss.mcp.client`).
    assert private_imports(_modules()) == []


def test_a_private_module_is_its_own_packages_alone(tmp_path: Path) -> None:
    assert _owner("agboss.engine.trees._lease") == "agboss.engine.trees"
    assert _owner("agboss.engine._engine") == "agboss.engine"
    assert _owner("agboss.store.protocol") == ""
    stray = tmp_path / "reaching.py"
    stray.write_text(
        "from agboss.engine.trees._lease import Held\n"  # another room's private module
        "from agboss.engine.runs._flows import FlowRunner\n"  # its own room's: fine
        "from agboss.engine.trees import Lease\n"  # what the room exports: fine
    )
    assert private_imports({"agboss.engine.runs._agent": (stray, False)}) == [
        "agboss.engine.runs._agent imports agboss.engine.trees._lease"
    ]


ENGINE_ROOMS = ("instance", "trees", "questions", "steps", "runs")
"""The engine's sub-packages, from the ground up; the pass (``_pass.py``) and the doors
(``_engine.py``) stand on them all."""


def rooms_against(modules: dict[str, tuple[Path, bool]]) -> list[str]:
    """The imports, in ``modules``, of an engine room that reach a room above its own, or the
    pass and the doors on top (these stand on every room)."""
    floor = {room: index for index, room in enumerate(ENGINE_ROOMS)}
    against = []
    for module, (path, is_package) in modules.items():
        parts = module.split(".")
        if parts[:2] != ["agboss", "engine"] or len(parts) < 3:
            continue
        here = floor.get(parts[2], len(ENGINE_ROOMS))
        for target in _imports(module, path, is_package):
            tparts = target.split(".")
            if tparts[:2] != ["agboss", "engine"] or len(tparts) < 3 or tparts[2] == parts[2]:
                continue
            there = floor.get(tparts[2], len(ENGINE_ROOMS))
            if here < len(ENGINE_ROOMS) and there >= here:
                against.append(f"{module} → {target}")
    return against


def test_the_engines_rooms_import_only_the_rooms_below_their_own() -> None:
    # A room imports a lower one through its ``__init__`` (what it exports: a private module
    # of it is no one else's, above), never a room above or the pass and the doors on top.
    modules = _modules()
    assert rooms_against(modules) == []
    rooms = {m.split(".")[2] for m in modules if m.startswith("agboss.engine.")}
    assert {room for room in rooms if not room.startswith("_")} == set(ENGINE_ROOMS)


def test_an_import_of_a_room_above_is_against_the_order(tmp_path: Path) -> None:
    stray = tmp_path / "upward.py"
    stray.write_text(
        "from agboss.engine.runs import FlowRunner\n"  # a room above
        "from agboss.engine import Engine\n"  # the doors on top
    )
    below = tmp_path / "downward.py"
    below.write_text("from agboss.engine.instance import Runtime\n")
    found = rooms_against(
        {"agboss.engine.trees._lease": (stray, False), "agboss.engine.runs._agent": (below, False)}
    )
    assert sorted(found) == [
        "agboss.engine.trees._lease → agboss.engine.Engine",
        "agboss.engine.trees._lease → agboss.engine.runs",
        "agboss.engine.trees._lease → agboss.engine.runs.FlowRunner",
    ]


def test_no_module_of_the_engine_imports_itself_back() -> None:
    # Within the engine, modules import one another in one direction (``TYPE_CHECKING`` and
    # imports inside functions included): a launch asks its runner for a child through a
    # protocol (`ChildRunner`), not by importing the interpreter that runs it.
    engine = [module for module in _modules() if module.startswith("agboss.engine.")]
    assert [module for module in engine if module in _reached_from(module)] == []


def test_no_module_is_longer_than_a_newcomer_reads_at_once() -> None:
    # Files under ~800 lines: a module that outgrows it is two concepts, and becomes two rooms.
    long = {
        module: lines
        for module, (path, _) in _modules().items()
        if (lines := len(path.read_text().splitlines())) > 800
    }
    assert long == {}
