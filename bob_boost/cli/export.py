"""``bob-boost export MODEL --format onnx -o MODEL.onnx``: the model as an ONNX graph (needs the onnx extra)."""
from __future__ import annotations

import argparse

from .._optional import optional_import
from ._common import CommandError, HelpFormatter, load_model, model_classes

#: The export formats.
FORMATS = ("onnx",)


def add_parser(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add the ``export`` subcommand to ``commands``."""
    parser = commands.add_parser("export", parents=[common], formatter_class=HelpFormatter,
                                 help='write a model in another format (ONNX; needs pip install "bob_boost[onnx]")')
    parser.add_argument("model", help="model file (HDF5)")
    parser.add_argument("--format", choices=FORMATS, default="onnx", help="the format to write")
    parser.add_argument("-o", "--output", required=True, help="file to write")
    parser.set_defaults(handler=command_export)


def command_export(args: argparse.Namespace) -> int:
    """Run ``bob-boost export``: labels as ``bob-boost predict`` prints them (the model's class labels)."""
    machine = load_model(args.model)
    optional_import("onnx", "export", CommandError)  # fail here, in one line, before any work
    from ..onnx import save_onnx
    encoding = model_classes(machine)
    save_onnx(machine, args.output, classes=None if encoding is None else list(encoding.classes))
    return 0
