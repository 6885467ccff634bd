"""``bob-boost train-cascade``: train a Haar or LBP cascade from ``opencv_traincascade``'s inputs, as OpenCV XML.

The options keep ``opencv_traincascade``'s names and meanings (``-data``, ``-vec``, ``-bg``, ``-numPos``,
``-numNeg``, ``-numStages``, ``-w``, ``-h``, ``-featureType``, ``-mode``, ``-minHitRate``, ``-maxFalseAlarmRate``,
``-weightTrimRate``, ``-maxWeakCount``, ``-bt``), plus ``-info`` for positives boxed in images. ``-bt`` takes
``GAB`` (OpenCV's default) and bob_boost's stage learners ``DAB`` (discrete AdaBoost), ``AdaBoostDB`` and
``CSAdaBoost`` (Cost-Sensitive AdaBoost, both with ``--costs``). ``-data DIR`` receives
``cascade.xml`` after every stage and ``params.json``; a run on a folder that has them continues after their
stages and gives the cascade one uninterrupted run gives. The training is
:func:`bob_boost.vision.opencv_train.train_opencv_cascade`.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ._common import CommandError, HelpFormatter, positive_int

#: The options a resumed run must share with the run that began it (``params.json``).
RESUMED_OPTIONS = ("w", "h", "featureType", "mode", "minHitRate", "maxFalseAlarmRate", "weightTrimRate",
                   "maxWeakCount", "numPos", "numNeg", "features_per_stage", "seed", "bt", "costs")

#: What a ``params.json`` written before an option existed means by its absence.
EARLIER_SETTINGS = {"bt": "GAB", "costs": [2.0, 1.0]}

#: ``-bt``'s stage learners (None: Gentle AdaBoost in OpenCV's arithmetic).
BOOST_TYPES = ("GAB", "DAB", "AdaBoostDB", "CSAdaBoost")


def add_parser(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add the ``train-cascade`` subcommand to ``commands``."""
    # -h is the window height, as opencv_traincascade names it: the help is --help alone
    parser = commands.add_parser("train-cascade", parents=[common], formatter_class=HelpFormatter, add_help=False,
                                 help="train a Haar or LBP cascade from opencv_traincascade's inputs (OpenCV XML)")
    parser.add_argument("--help", action="help", help="show this help message and exit")
    parser.add_argument("-data", required=True, metavar="DIR",
                        help="folder for cascade.xml (rewritten after every stage) and params.json; a folder "
                             "that has them is resumed")
    positives = parser.add_mutually_exclusive_group(required=True)
    positives.add_argument("-vec", metavar="FILE", help="positive samples from opencv_createsamples (.vec)")
    positives.add_argument("-info", metavar="FILE",
                           help="positives as boxes in images: lines 'image count x y w h ...'")
    parser.add_argument("-bg", required=True, metavar="FILE",
                        help="background list: one image path per line (relative to the list's folder)")
    parser.add_argument("-numPos", type=positive_int, help="positives per stage (default: all)")
    parser.add_argument("-numNeg", type=positive_int, help="negatives per stage (default: as many as -numPos)")
    parser.add_argument("-numStages", type=positive_int, default=20, help="stages to train")
    parser.add_argument("-w", type=positive_int, default=24, help="window width")
    parser.add_argument("-h", type=positive_int, default=24, help="window height")
    parser.add_argument("-featureType", default="HAAR", choices=("HAAR", "LBP"),
                        help="Haar features or multi-block LBP codes")
    parser.add_argument("-mode", default="BASIC", choices=("BASIC", "CORE", "ALL"), help="Haar feature set")
    parser.add_argument("-minHitRate", type=float, default=0.995, help="least share of positives a stage keeps")
    parser.add_argument("-maxFalseAlarmRate", type=float, default=0.5,
                        help="most share of negatives a stage passes")
    parser.add_argument("-weightTrimRate", type=float, default=0.95, help="share of the weight each stump fits")
    parser.add_argument("-maxWeakCount", type=positive_int, default=100, help="most stumps a stage")
    parser.add_argument("--features-per-stage", dest="features_per_stage", type=positive_int, default=8000,
                        help="features searched each stage, drawn at random (OpenCV searches all)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the feature draws")
    parser.add_argument("-bt", default="GAB", choices=BOOST_TYPES,
                        help="stage learner: GAB (Gentle AdaBoost, as opencv_traincascade's), DAB (discrete "
                             "AdaBoost), AdaBoostDB or CSAdaBoost (Cost-Sensitive AdaBoost; both with --costs)")
    parser.add_argument("--costs", nargs=2, type=float, default=[2.0, 1.0], metavar=("MISS", "FALSE_ALARM"),
                        help="AdaBoostDB's and CSAdaBoost's costs of a missed object and of a false alarm")
    parser.set_defaults(handler=command_train_cascade)


def _settings(args: argparse.Namespace) -> dict:
    return {name: getattr(args, name) for name in RESUMED_OPTIONS}


def command_train_cascade(args: argparse.Namespace) -> int:
    """Run ``bob-boost train-cascade``."""
    from ..exceptions import BobBoostError
    from ..vision.opencv_sources import background_windows, info_positives, read_background_list, vec_positives
    from ..vision.opencv_train import train_opencv_cascade
    from ..vision.opencv_write import write_opencv_cascade
    from ..vision.opencv_xml import read_opencv_cascade
    folder = Path(args.data)
    folder.mkdir(parents=True, exist_ok=True)
    cascade_path, params_path = folder / "cascade.xml", folder / "params.json"
    settings = _settings(args)
    initial = None
    if params_path.exists():
        previous = json.loads(params_path.read_text(encoding="utf-8"))
        changed = [name for name in RESUMED_OPTIONS
                   if previous.get(name, EARLIER_SETTINGS.get(name)) != settings[name]]
        if changed:
            raise CommandError(f"-data: {folder} was trained with other -{', -'.join(changed)} "
                               f"({', '.join(f'{name}={previous.get(name)!r}' for name in changed)})")
        if cascade_path.exists():
            initial = read_opencv_cascade(os.fspath(cascade_path))
    try:
        learner = _stage_learner(args)
        positives = (vec_positives(args.vec, args.w, args.h) if args.vec is not None
                     else info_positives(args.info, args.w, args.h))
        negatives = background_windows(read_background_list(args.bg), args.w, args.h)
        params_path.write_text(json.dumps(settings, indent=1), encoding="utf-8")

        def saved(cascade) -> None:
            write_opencv_cascade(cascade, cascade_path)
            if not args.quiet:
                print(f"stage {cascade.number_of_stages}: {int(cascade.stage_weak[-1] - cascade.stage_weak[-2])} "
                      f"stumps; {cascade_path}", file=sys.stderr, flush=True)

        cascade = train_opencv_cascade(
            positives, negatives, number_of_stages=args.numStages, min_hit_rate=args.minHitRate,
            max_false_alarm_rate=args.maxFalseAlarmRate, max_weak_count=args.maxWeakCount, mode=args.mode,
            num_pos=args.numPos, num_neg=args.numNeg, features_per_stage=args.features_per_stage,
            weight_trim_rate=args.weightTrimRate, random_state=args.seed, initial=initial, on_stage=saved,
            feature_type=args.featureType, stage_learner=learner)
    except (BobBoostError, ValueError, OSError) as error:
        raise CommandError(str(error)) from None
    write_opencv_cascade(cascade, cascade_path)
    if not args.quiet:
        print(f"{cascade.number_of_stages} stages, {int(cascade.stage_weak[-1])} stumps: {cascade_path}",
              file=sys.stderr)
    return 0


def _stage_learner(args: argparse.Namespace):
    """``-bt``'s stage learner (None: Gentle AdaBoost)."""
    from ..vision.stages import AdaBoostDBStage, AdaBoostStage, CostSensitiveAdaBoostStage
    if args.bt != "GAB" and not all(cost > 0 for cost in args.costs):
        raise CommandError(f"--costs: must be positive, got {args.costs}")
    return {"GAB": lambda: None, "DAB": AdaBoostStage,
            "AdaBoostDB": lambda: AdaBoostDBStage(*args.costs),
            "CSAdaBoost": lambda: CostSensitiveAdaBoostStage(*args.costs)}[args.bt]()
