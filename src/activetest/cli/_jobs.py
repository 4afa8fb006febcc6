"""``activetest demo`` and ``score``: whole jobs on the bundled models or a cluster."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from activetest.cli._app import (
    NoProgress,
    Threads,
    _err,
    _escape,
    _out,
    _user_errors,
    app,
    out_path,
)


@app.command()
@_user_errors
def demo(
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the session file, the "
                                      "report and its plots (default: activetest-demo).",
                                      parser=out_path, metavar="<path>",
                                      show_default=False)] = Path("activetest-demo"),
    quick: Annotated[bool, typer.Option("--quick", help="A smaller, faster demo (for CI): "
                                        "200 items, 50 labels.")] = False,
    pool_size: Annotated[int | None, typer.Option(help="Pool size (default 1000; --quick "
                                                  "200).", show_default=False)] = None,
    labels: Annotated[int | None, typer.Option(help="Labels to collect (default 100; --quick "
                                               "50).", show_default=False)] = None,
    shots: Annotated[int, typer.Option(help="In-context examples for the surrogate.")] = 8,
    target_shots: Annotated[int | None, typer.Option(
        help="In-context examples for the target (0: zero-shot; default: same as "
             "--shots).", show_default=False)] = None,
    surrogate: Annotated[str, typer.Option(help="Surrogate model spec.")] = "gemma3-270m",
    target: Annotated[str, typer.Option(help="Target model spec.")] = "smollm2-135m",
    seed: Annotated[int, typer.Option(help="Seed for the data, the draws and the "
                                      "bootstrap.")] = 0,
    cache_dir: Annotated[Path | None, typer.Option(help="Score cache folder.",
                                                   show_default=False)] = None,
    threads: Threads = None,
    no_progress: NoProgress = False,
) -> None:
    """Offline demo: a full active-testing evaluation on generated data with the bundled models.

    Labels come from the generated data (a simulated labeller); the estimate is shown
    beside the true value and beside uniform sampling with as many labels.
    """
    from activetest.session.demo import run_demo

    result = run_demo(out, quick=quick, pool_size=pool_size, n_labels=labels, shots=shots,
                      target_shots=shots if target_shots is None else target_shots,
                      surrogate=surrogate, target=target, seed=seed,
                      cache_dir=cache_dir, threads=threads, progress=not no_progress,
                      console=_out)
    _out.print(f"done in {result.seconds:.0f} s; report: {_escape(str(result.report))}")

@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def score(ctx: typer.Context, engine: Annotated[str, typer.Option(
        "--engine", help="Where to score: ray (a Ray cluster). The other options are "
        "python -m activetest.models.ray_score's (see its --help and docs/scale.md).")] = "ray",
          ) -> None:
    """Score a pool on a cluster and write the Parquet file a session reads as table:FILE.

    Options after --engine: --pool FILE --task T --model SPEC --out FILE.parquet (all
    needed), --id-column, --text-column, --examples FILE --shots K [--seed S: the
    examples a session with that seed draws], --shards, --max-retries, --threads,
    --address, --label-scoring first-token|full-sequence (how each class is read from its
    label word, as for init; not for openai: models) (python -m
    activetest.models.ray_score --help; docs/scale.md).
    """
    if engine != "ray":
        _err.print(f"error: --engine {engine!r}: the one engine is ray")
        raise typer.Exit(2)
    from activetest.models.ray_score import main as ray_main

    raise typer.Exit(ray_main(list(ctx.args)))
