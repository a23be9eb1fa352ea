"""matplotlib charts of gpuplan results, the desktop app's charts (gui/): latency CDFs of a
simulation, throughput and latency against load of a curve, the memory per GPU of an estimate or
fit, the cost ranking of a plan. matplotlib is optional and imported only here.

``result.plot()`` calls ``draw(result)``; ``kind`` picks another chart where a result has
several. Each function returns the matplotlib Axes it drew on (an array of Axes for the CDFs).
"""


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise ImportError("plot() needs matplotlib (Debian: apt-get install python3-matplotlib)") from e
    return plt


def _axes(ax, ncols=1):
    if ax is not None:
        return ax
    plt = _pyplot()
    _, axes = plt.subplots(1, ncols, figsize=(4.2 * ncols, 3.4), squeeze=True)
    return axes


def latency_cdfs(result, ax=None):
    """TTFT, TPOT and end-to-end latency CDFs of a simulation's completed requests (the app's
    Simulation tab: requests served locally or by the cloud spill-over)."""
    frame = result.to_frame("requests")
    done = frame[frame["outcome"].isin(["completed", "cloud"])]
    axes = _axes(ax, 3)
    for a, column, title in zip(axes, ("ttft_s", "tpot_s", "e2e_s"), ("TTFT", "TPOT", "E2E")):
        values = done[column].dropna().sort_values().to_numpy()
        n = len(values)
        a.step(values, [(i + 1) / n for i in range(n)], where="post")
        a.set_xlabel(f"{title} (s)")
        a.set_ylabel("fraction of requests")
        a.set_title(f"{title} CDF")
        a.grid(True, alpha=0.3)
    return axes


def timeseries(result, column="running", ax=None):
    """One column of the simulation's time series against time."""
    frame = result.to_frame("timeseries")
    a = _axes(ax)
    a.plot(frame["t_s"], frame[column])
    a.set_xlabel("time (s)")
    a.set_ylabel(column)
    return a


def curve(result, y="throughput_tok_s", ax=None):
    """A curve's figure ``y`` against the load, one line per GPU, the highest load meeting the
    SLO marked (the app's Curves tab)."""
    frame = result.to_frame()
    a = _axes(ax)
    axis = result.to_dict().get("axis", "load")
    for gpu, rows in frame.groupby("gpu", sort=False):
        a.plot(rows["load"], rows[y], marker="o", label=gpu)
        max_load = rows["max_load"].iloc[0]
        if max_load == max_load and max_load is not None:  # not NaN
            a.axvline(max_load, linestyle=":", alpha=0.5)
    a.set_xlabel(axis)
    a.set_ylabel(y)
    a.legend()
    a.grid(True, alpha=0.3)
    return a


def memory(result, ax=None):
    """The memory per GPU of an estimate or fit as one stacked bar: weights, KV cache budget,
    activations, runtime overheads and what is left, against the usable capacity."""
    m = result.to_dict()["memory"]
    parts = [("weights", m.get("weights_bytes", 0)), ("KV cache", m.get("kv_budget_bytes", 0)),
             ("activations", m.get("activations_bytes", 0)),
             ("overheads", m.get("overhead_bytes", 0)), ("free", max(m.get("free_bytes", 0), 0))]
    a = _axes(ax)
    left = 0.0
    for label, value in parts:
        gib = value / 2**30
        a.barh([0], [gib], left=left, label=label)
        left += gib
    a.axvline(m.get("capacity_bytes", 0) / 2**30, color="black", linestyle="--")
    a.set_yticks([])
    a.set_xlabel("GiB per GPU")
    a.legend(ncol=5, fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.3))
    return a


def cost_ranking(result, column="monthly", ax=None):
    """A plan's ranked configurations by monthly cost (or ``per_million_tokens``)."""
    frame = result.to_frame()
    a = _axes(ax)
    labels = [f"{r.gpu} x{r.gpus} tp{r.tp}" for r in frame.itertuples()]
    a.barh(labels[::-1], frame[column].to_numpy()[::-1])
    currency = frame["currency"].iloc[0] if "currency" in frame and len(frame) else ""
    a.set_xlabel(f"{column} ({currency})")
    return a


def draw(result, kind=None, ax=None):
    """The chart of a result: ``kind`` one of cdf, timeseries, throughput, ttft, tpot, memory,
    cost; by default the one that suits the command."""
    command = result.command
    if kind in (None, "cdf") and command == "simulate":
        return latency_cdfs(result, ax)
    if kind == "timeseries":
        return timeseries(result, ax=ax)
    if command == "curve":
        y = {"ttft": "ttft_s", "tpot": "tpot_s", "e2e": "e2e_s"}.get(kind, "throughput_tok_s")
        return curve(result, y, ax)
    if command in ("estimate", "fit") and kind in (None, "memory"):
        return memory(result, ax)
    if command == "plan":
        return cost_ranking(result, "per_million_tokens" if kind == "per_million_tokens"
                            else "monthly", ax)
    raise ValueError(f"no chart '{kind}' for a {command} result")
