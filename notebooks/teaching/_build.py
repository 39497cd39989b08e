"""Writes the four lab notebooks (and notebooks/explore.ipynb) from the text below, without
outputs. Edit here, then: .venv/bin/python notebooks/teaching/_build.py
The logic lives in src/python/serverbench/teaching/ and analysis/explorer/explore*.py; the options of
a multiple-choice exercise are read from its lab module, so they are written once."""

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from serverbench.teaching import lab1 as L1
from serverbench.teaching import lab2 as L2
from serverbench.teaching import lab3 as L3
from serverbench.teaching import lab4 as L4

HERE = Path(__file__).resolve().parent
KERNEL = {"display_name": "Python (serverbench)", "language": "python", "name": "serverbench"}

HOW = ("**How a lab works.** Every exercise is *predict → run → explain*. Before you run a section's "
       "measurement cells (its tables and figures), read its exercises and write your guess in each "
       "`prediction_N`. Then run the cells, set `answer_N` from your measurements and run the self-check "
       "below it: it prints `correct` (and why) or a hint, then sets your prediction beside what you "
       "measured; the gap is what your picture of the machine left out. Some exercises ask *why*: answer "
       "those with the letter of the mechanism. Numbers come from the real Go, Erlang and Scala/Akka "
       "programs run by the package's harness at tiny sizes (the `lab` profile), so yours will differ a "
       "little from a classmate's: the self-checks compare against *your* runs.")


def M(text):
    return new_markdown_cell(text.strip())


def C(code):
    return new_code_cell(code.strip())


def P(code):
    c = new_code_cell(code.strip())
    c.metadata["tags"] = ["parameters"]
    return c


COMMON_PARAMS = '''# Parameters (a class run sets them with papermill: -p solutions True ...)
solutions = False   # True: fill in every answer and show the explanations (the teacher's copy)
run = True          # True: run the real benchmarks now; False: reuse this lab's newest sweep
raw_folder = None   # a sweep folder to study instead of running (e.g. a classmate's)
languages = None    # None: erlang, go, scala_akka; or e.g. ["go", "erlang"]'''


def exercise(n, title, prompt, key, example, lab=None):
    """An exercise: its text (with the options of a multiple-choice one, from lab's module),
    the prediction and answer variables, and the self-check."""
    text = f"### Exercise {n}: {title}\n\n{prompt}"
    options = lab.EXERCISES[key].options if lab is not None else None
    if options:
        text += "\n\n" + "\n".join(f"* **{x})** {t}" for x, t in options.items())
    return [M(text),
            C(f"prediction_{n} = None  # BEFORE the measurement cells above run: your guess, e.g. {example}\n"
              f"answer_{n} = None  # after them: your answer from the measurements, e.g. {example}"),
            C(f'lab.check("{key}", answer_{n}, data, solutions, prediction_{n})')]


def lab1():
    return [
        M(f"""# Lab 1: What does a message cost?

**Time:** {L1.CLASS_MINUTES} minutes (the runs take under a minute).

**Learning goals.** After this lab you can
1. split the cost of one message into a fixed hand-off and a part proportional to its bytes;
2. explain why sending a *shared* (immutable, by-reference) payload is nearly free at any size,
   while a *copy* costs the memory bandwidth;
3. say what Go, Erlang and the JVM do with a large message (a slice header, a reference-counted
   off-heap binary, a reference), and why a short JVM run looks slow.

**The benchmark.** `pingping`: two processes send each other R messages of B bytes at the same time.
Under `copy` the receiver copies every message into a buffer it owns before answering; under `share`
each process sends the same immutable buffer by reference. The harness runs each configuration as a
fresh process pinned to the machine's cores and records every trial.

""" + HOW),
        P(COMMON_PARAMS + '''
trials = 3          # trials per configuration (1..7)
message_bytes = [100, 10000, 1000000]   # 2 to 5 sizes in bytes
repetitions = 2000  # messages each way per run (100..20000)'''),
        C('''%matplotlib inline
from serverbench.teaching import lab1 as lab
data = lab.load(run=run, raw_folder=raw_folder, languages=languages, trials=trials,
                message_bytes=message_bytes, repetitions=repetitions)'''),
        M("## 1. What earlier runs found"),
        C("lab.background(data)"),
        M("""## 2. Your runs

*Predict before you run the next two cells:* read exercises 1 to 3 below and write a `prediction_N` for
each. Which grows faster with the size, copy or share? By how much at the largest size?

The table shows the median nanoseconds per message; the figure shows **every trial** (a dot) with the
median (black bar). Look at the spread before you trust a median."""),
        C("lab.table(data)"),
        C("fig = lab.figure(data)"),
        *exercise(1, "copy vs share", "In Go, how many times more does one message of the largest size cost "
                  "under `copy` than under `share`? (the `copy/share` column)", "ratio", 10),
        *exercise(2, "the price of a byte", "From Go's `copy` rows: (largest size - smallest size) divided by the "
                  "difference of their ns per message is the copy speed in bytes per ns (= GB/s). Compute it.",
                  "bandwidth", 5),
        *exercise(3, "does size matter when sharing?", "Answer `'yes'` or `'no'`: in Go, does a shared message "
                  "cost more than twice as much at the largest size as at the smallest?", "share_flat", "'no'"),
        M("""## 3. Explain

Two questions about the mechanisms behind your table: answer them from what you measured and what you
know of each runtime. The self-check explains once you are right.

* The JVM always passes references; `copy` is `System.arraycopy` into a buffer allocated before the
  clock. Why is Scala/Akka still slow at R = 2000 whatever the size? (Hint: lab 4, *warm-up*.)"""),
        *exercise(4, "the fixed part", "Which language pays the most per message at the smallest size, where "
                  "almost no bytes are copied? `'erlang'`, `'go'` or `'scala_akka'`.", "fixed_cost", "'go'"),
        *exercise(5, "why sharing is free in Erlang", "In Erlang, a shared 1 MB message costs about as much as a "
                  "100 B one. Which mechanism makes that so? Answer with its letter.", "why_share", "'a'", L1),
        M("Write your explanation of Scala/Akka's cost here: …"),
        C("lab.takeaway(solutions)"),
    ]


def lab2():
    return [
        M(f"""# Lab 2: Processes are memory

**Time:** {L2.CLASS_MINUTES} minutes (the runs take under a minute).

**Learning goals.** After this lab you can
1. measure the time and the memory it takes to create N lightweight processes, and see that both
   grow linearly with N;
2. connect *bytes per process* to *page faults*: memory costs time the first time it is touched;
3. explain why the maximum number of processes is a **memory** limit, and search for it safely under a
   budget instead of crashing the machine.

**The benchmarks.** `spawn` creates N processes that each signal "ready" once and then wait forever; it
reports the time until all are ready and the growth of the resident memory (RSS) per process.
`spawn_max` is the harness's search: it starts small, multiplies N by a factor until a run fails inside
a memory budget (a cgroup, or an RSS watchdog), then bisects once.

""" + HOW),
        P(COMMON_PARAMS + '''
trials = 3          # trials per N (1..7)
processes = [1000, 10000, 50000]   # 1 to 5 values of N (100..200000)
budget_mib = 160    # memory budget of the max-processes search, MiB (64..1024)'''),
        C('''%matplotlib inline
from serverbench.teaching import lab2 as lab
data = lab.load(run=run, raw_folder=raw_folder, languages=languages, trials=trials,
                processes=processes, budget_mib=budget_mib)'''),
        M("""## 1. Time and bytes per process

*Predict (write `prediction_1` and `prediction_2` below first):* does one process cost the same at
N = 1,000 as at N = 50,000? Which language needs the most time per process?"""),
        C("lab.table(data)"),
        C("fig = lab.figure(data)"),
        *exercise(1, "bytes per process", "How many bytes does one Go process cost at the largest N "
                  "(`bytes_per_process`)?", "bytes", 3000),
        *exercise(2, "does a process cost more when there are more?", "Which language's time per process "
                  "(`us_per_process`) grows the most from the smallest to the largest N in *these* runs? "
                  "`'erlang'`, `'go'` or `'scala_akka'`.", "grows", "'go'"),
        M("""## 2. Page faults: memory costs time when first touched

The harness reads each run's page-fault count from the kernel (`getrusage`); the next cell compares two
N. A *minor page fault* is the kernel handing the process a fresh 4 KiB page the first time it touches it."""),
        C("lab.faults(data)"),
        *exercise(3, "faults per process", "How many minor page faults does one extra Go process cause "
                  "(`faults_per_process`)? Compare with `pages_per_process_from_rss`.", "faults", 1.0),
        *exercise(4, "why a few kilobytes", "A goroutine or an Erlang process that only waits still costs a "
                  "few kilobytes. Which mechanism explains it? Answer with its letter.", "why_bytes", "'c'", L2),
        M("""## 3. A safe search under a small budget

*Predict:* from bytes per process, how many Go processes fit in the budget (`budget_mib` MiB)? The search
below started at 10,000 and multiplied N by 4 until a run failed, then bisected once."""),
        C("lab.search_table(data)"),
        *exercise(5, "predict the limit", "Your prediction of the largest N that fits: budget / bytes per "
                  "process (remember the runtime itself needs memory too).", "limit", 50000),
        *exercise(6, "what stopped it", "What stopped the search? `'memory'`, `'time'` or `'other'` "
                  "(see `status`).", "stopper", "'memory'"),
        C("lab.takeaway(solutions)"),
    ]


def lab3():
    return [
        M(f"""# Lab 3: Throughput vs cores

**Time:** {L3.CLASS_MINUTES} minutes (the runs take under a minute).

**Learning goals.** After this lab you can
1. read a throughput experiment: P pairs of processes exchanging messages as fast as they can, on 1
   and on 2 cores;
2. explain why one pair cannot use two cores, and why more pairs than cores add no throughput;
3. relate the curves to each runtime's scheduler (Go's work-stealing Ps, Erlang's schedulers with run
   queues, Akka's fork-join dispatcher) and to the paper's "Go flattens, Erlang peaks".

**The benchmark.** `throughput`: P server/client pairs; a server sends a message, the client answers;
each round trip is one *exchange*. The harness pins the run to 1 or 2 CPUs and sets the runtime's
scheduler count to match.

""" + HOW),
        P(COMMON_PARAMS + '''
trials = 2          # trials per configuration (1..5)
pairs = [1, 4, 16]  # 1 to 5 values of P (1..1024)
duration_s = 0.3    # seconds of exchanges per run (0.1..3)'''),
        C('''%matplotlib inline
from serverbench.teaching import lab3 as lab
data = lab.load(run=run, raw_folder=raw_folder, languages=languages, trials=trials, pairs=pairs,
                duration_s=duration_s)'''),
        M("## 1. What earlier runs found"),
        C("lab.background(data)"),
        M("""## 2. Your runs

*Predict (write the `prediction_N` of exercises 1 to 4 below first):* with one pair, does a second core
help? With 16 pairs?"""),
        C("lab.table(data)"),
        C("fig = lab.figure(data)"),
        *exercise(1, "speed-up", "Go's speed-up from 1 to 2 cores at the largest P (the `speed-up` column).",
                  "speedup", 1.5),
        *exercise(2, "who gains most", "Which language gains most from the second core at the largest P? "
                  "`'erlang'`, `'go'` or `'scala_akka'`.", "gainer", "'go'"),
        *exercise(3, "more pairs on one core", "Answer `'yes'` or `'no'`: on 1 core, does Go's rate grow by "
                  "more than 20 % from the smallest to the largest P?", "pairs1", "'yes'"),
        *exercise(4, "why one pair cannot use two cores", "Which mechanism keeps a single pair from using the "
                  "second core? Answer with its letter.", "why_one_pair", "'a'", L3),
        C("lab.takeaway(solutions)"),
    ]


def lab4():
    return [
        M(f"""# Lab 4: Benchmarking pitfalls

**Time:** {L4.CLASS_MINUTES} minutes. The core (sections 1 to 3) takes about 30 minutes; sections 4 and 5 are an
optional part for the last 15, *if you have time*. The runs take under a minute.

**Learning goals.** After this lab you can
1. see noise: the same program and input give different times, so one run proves nothing;
2. recognise warm-up (a JIT compiling the hot loop) and keep it out of a measurement;
3. say why 3 trials cannot give a 95 % interval, and how many can;
4. find, from the numbers alone, a benchmark that silently does less work: a batch counter that drops
   its remainder; and, in the optional part, a spawn timed before the processes exist and a TCP
   ping-pong reading 1 byte at a time.

""" + HOW),
        P(COMMON_PARAMS + '''
trials = 5          # measured trials per configuration (2..9), plus one warm-up run each
duration_s = 0.3    # seconds of the throughput run (0.1..2)'''),
        C('''%matplotlib inline
from serverbench.teaching import lab4 as lab
data = lab.load(run=run, raw_folder=raw_folder, languages=languages, trials=trials, duration_s=duration_s)'''),
        M("""## 1. Noise and warm-up

pingping with 5 kB messages at two lengths, R = 1,000 and R = 20,000, each with one discarded warm-up
run (trial 0) and `trials` measured ones. *Predict (write the `prediction_N` of exercises 1 to 3 below
first):* how far apart will the fastest and slowest trial of one configuration be? Will a short run cost
more per message than a long one? (`load avg before`: how busy the machine was when the runs started.)"""),
        C("lab.noise_table(data)"),
        C("fig = lab.figure(data)"),
        C("fig = lab.ecdf(data)"),
        *exercise(1, "noise", "For Go at R = 20,000: the slowest trial divided by the fastest (`max/min`).",
                  "spread", 1.2),
        *exercise(2, "warm-up", "For Scala/Akka: ns per message at R = 1,000 divided by ns per message at "
                  "R = 20,000.", "warmup", 3),
        *exercise(3, "why a short run is slow", "Which mechanism makes Scala/Akka's short run cost more per "
                  "message than its long one? Answer with its letter.", "why_warmup", "'a'", L4),
        M("""## 2. Why three trials cannot give a 95 % interval

With n trials, the interval [smallest, largest] misses the true median only if all trials fall on the
same side of it. The table computes, for each n, the narrowest order-statistic interval and its real
confidence (the package's `stats` module), and the best a comparison of two languages with n trials each
can reach."""),
        C("lab.coverage_table()"),
        *exercise(4, "three trials", "The confidence that [min, max] of 3 trials contains the median "
                  "(a number between 0 and 1).", "coverage3", 0.5),
        *exercise(5, "how many trials", "The fewest trials whose [min, max] reaches 95 %.", "min_trials", 4),
        M("""## 3. A counter that drops the remainder

In `throughput` each server reports its count in batches of K = 10,000 exchanges. The original programs
reported only whole batches, so each pair's last, incomplete batch was lost. The fair programs send the
remainder too; the table shows what a batch-only counter would have reported for the same run (from
the average count per pair)."""),
        C("lab.batch_table(data)"),
        *exercise(6, "lost work", "The fraction of Go's exchanges a batch-only counter loses (`fraction "
                  "lost`).", "batch", 0.5),
        M("""---

## If you have time: an optional part (about 15 minutes)

The core of the lab ends here: skip to the take-away at the end if the class is out of time. The two
sections below find two more benchmarks that did less work than they reported."""),
        M("""## 4. Timing an asynchronous spawn; the paper variant

`spawn_call_s` stops the clock when the spawn loop returns; `all_ready_s` when every process has run.
Akka's `actorOf` returns before the actor exists. Which language shows the larger gap in the committed
sample sweep? Then the paper variant (the original programs' quirks), if this checkout has it:
compare the work counters of fair and paper runs. A lab that studies an existing sweep makes no
paper-variant runs: it shows the ones recorded with the package (the table's `sweep` column)."""),
        C("lab.spawn_timing()"),
        C("lab.paper_vs_fair(data, run=run)"),
        C("lab.paper_spawn(data)"),
        *exercise(7, "believe the report?", "In the paper-variant throughput run, what fraction of Go's real "
                  "exchanges did the program report (`reported / done`)?", "paper", 0.9),
        M("""## 5. A TCP ping-pong with a 1-byte read buffer

One TCP ping-pong benchmark looked several times faster once its read buffer was 1 byte. The next cell
runs `tcp_pingpong` with `--read-buffer-bytes 1` and with 4 (one whole message); when this lab studies
an existing sweep it shows the TCP runs recorded with the package at the same configuration. Compare the
reported time per round trip with `bytes_read` and `round_trips_completed`."""),
        C("lab.tcp_buffer(data, run=run)"),
        *exercise(8, "too good to be true", "How many times faster does Go's 1-byte run *look*: reported µs per "
                  "round trip with 4 bytes divided by that with 1 byte?", "tcp", 2),
        *exercise(9, "why it looked faster", "Which mechanism made the 1-byte run look faster? Answer with its "
                  "letter.", "why_tcp", "'a'", L4),
        C("lab.takeaway(solutions)"),
    ]


def explore():
    return [
        M("""# Explore: compare sweeps side by side

Pick two (or more) sweeps under `data/raw/`: the same figure overlaid, per-configuration ratios with
intervals at the confidence they reach, the trials behind each median, and what differed between the
machines (CPU, kernel, runtime versions, commit). Nothing is run: this reads the raw logs.

In JupyterLab the last cell shows dropdowns; under papermill set the parameters
(`-p sweep_a ... -p sweep_b ...`)."""),
        P('''# Parameters
sweep_a = None      # a sweep id under data/raw/ or a folder; None: the committed quick sweep
sweep_b = None      # None: the newest other sweep
table = "pingping"  # any table: pingping, spawn, spawn_max, throughput, echo_flood, recovery, tcp_pingpong
metric = None       # None: the table's usual metric (ns_per_message, all_ready_s, exchanges_per_s ...)
kind = "strip"      # distribution plot: strip, violin or ecdf'''),
        C('''%matplotlib inline
from serverbench.analysis.explorer import explore_notebook as ex
A, B = ex.pick(sweep_a, sweep_b, table, metric, kind)
ex.list_sweeps()'''),
        M("## The same figure, overlaid (lines: medians; dots: trials; line style: sweep)"),
        C("fig = ex.overlay(A, B, table, metric)"),
        M("## Per configuration: B / A with an interval at the confidence it reaches"),
        C("ex.compare(A, B, table, metric)"),
        M("## The trials behind each median"),
        C("figs = ex.distributions(A, B, table, metric, kind)"),
        M("## What differed between the two sweeps (from their manifests)"),
        C("ex.environment_diff(A, B)"),
        M("## Interactive (JupyterLab): choose sweeps and table from dropdowns"),
        C("ex.widgets()"),
    ]


def write(name, cells, folder=HERE):
    nb = new_notebook(cells=cells, metadata={"kernelspec": KERNEL, "language_info": {"name": "python"}})
    for i, c in enumerate(nb.cells):  # stable ids: rebuilding gives the same files
        c["id"] = f"{name.replace('_', '-')}-{i:02d}"
    nbformat.validate(nb)
    nbformat.write(nb, folder / f"{name}.ipynb")


if __name__ == "__main__":
    write("lab1_message_cost", lab1())
    write("lab2_processes_are_memory", lab2())
    write("lab3_throughput_vs_cores", lab3())
    write("lab4_benchmarking_pitfalls", lab4())
    write("explore", explore(), HERE.parent)
