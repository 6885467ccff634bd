"""``bob-boost inspect``: weak machine types, rounds, features used and weights of a model."""
from __future__ import annotations

import argparse
import json
from typing import Any

from ..machine import BoostedMachine
from ..analysis import feature_names
from ._common import HelpFormatter, load_model


def add_parser(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add the ``inspect`` subcommand to ``commands``."""
    parser = commands.add_parser("inspect", parents=[common], formatter_class=HelpFormatter,
                                 help="weak machine types, rounds, features used and weights of a model")
    parser.add_argument("model", help="model file (HDF5)")
    parser.add_argument("--rounds", type=int, default=10, help="number of rounds to list")
    parser.add_argument("--all", action="store_true", help="list every round")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.set_defaults(handler=command_inspect)


def command_inspect(args: argparse.Namespace) -> int:
    """Run ``bob-boost inspect``."""
    machine = load_model(args.model, check_classes=False)  # show whatever metadata the file holds
    summary = describe(machine, args.model, None if args.all else args.rounds)
    print(json.dumps(summary, indent=2) if args.json else _format_description(summary))
    return 0


def describe(machine: BoostedMachine, path: str, rounds: int | None) -> dict[str, Any]:
    """A JSON-able summary of a model: types, rounds, features used (with their names when known), weights.

    ``feature_names`` is None, or the name of each entry of ``features_used``
    (from the model's metadata, see :func:`bob_boost.analysis.feature_names`);
    each round lists its features' names the same way.
    """
    weak = machine.weak_machines
    weights = machine.weights
    types: dict[str, int] = {}
    for m in weak:
        types[m.machine_type] = types.get(m.machine_type, 0) + 1
    shown = len(weak) if rounds is None else min(rounds, len(weak))
    names = feature_names(machine)
    used = machine.feature_indices().tolist()

    def named(indices: list[int]) -> list[str] | None:
        return None if names is None else [names[i] for i in indices]

    return {
        "file": path, "weak_machines": len(weak), "outputs": machine.number_of_outputs,
        "number_of_features": machine.number_of_features, "machine_types": types,
        "features_used": used, "feature_names": named(used),
        "cost_matrix": None if machine.cost_matrix is None else machine.cost_matrix.tolist(),
        "decision_rule": machine.decision_rule, "baseline": machine.baseline.tolist(),
        "metadata": machine.metadata,
        "rounds": [{"round": i + 1, "machine": repr(weak[i]), "features": weak[i].feature_indices().tolist(),
                    "feature_names": named(weak[i].feature_indices().tolist()), "weights": weights[i].tolist()}
                   for i in range(shown)],
    }


def _format_description(summary: dict[str, Any]) -> str:
    """The text report of a :func:`describe` summary."""
    used, names = summary["features_used"], summary["feature_names"]
    # names make each entry longer, so fewer are previewed on the one line
    limit = 30 if names is None else 12
    labels = list(map(str, used)) if names is None else [f"{i} ({name})" for i, name in zip(used, names)]
    preview = ", ".join(labels[:limit]) + (", ..." if len(used) > limit else "")
    lines = [f"model: {summary['file']}",
             f"weak machines (rounds): {summary['weak_machines']}",
             "machine types: " + ", ".join(f"{k} x{v}" for k, v in summary["machine_types"].items()),
             f"outputs: {summary['outputs']}",
             f"decision rule: {summary['decision_rule']}",
             "baseline: " + " ".join(f"{b:.6g}" for b in summary["baseline"]),
             f"features: {summary['number_of_features']} in the input, {len(used)} used: {preview}"]
    if summary["cost_matrix"] is not None:
        lines.append(f"cost matrix: {summary['cost_matrix']}")
    for key, value in sorted(summary["metadata"].items()):
        # names are shown with the features (a list as long as the input is too long for one line; --json has it)
        if key not in ("feature_names", "feature_names_in"):
            lines.append(f"{key}: {value}")
    if summary["rounds"]:
        lines.append("round  weights  weak machine")
        for entry in summary["rounds"]:
            weights = " ".join(f"{w:.4g}" for w in entry["weights"])
            named = f"  [{', '.join(entry['feature_names'])}]" if entry["feature_names"] else ""
            lines.append(f"{entry['round']:5d}  {weights}  {entry['machine']}{named}")
        hidden = summary["weak_machines"] - len(summary["rounds"])
        if hidden:
            lines.append(f"... {hidden} more (use --rounds N or --all)")
    return "\n".join(lines)

