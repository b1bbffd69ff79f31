"""mlsvm.progress: draws on a terminal, stays silent on anything else."""

import io

import pytest

from mlsvm.progress import Progress, is_terminal, progress


class FakeTTY(io.StringIO):
    """A terminal as far as ``isatty`` tells (like a real file, a closed one raises)."""

    def isatty(self):
        if self.closed:
            raise ValueError("I/O operation on closed file")
        return True


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_terminal_shows_count_bar_percentage_and_times():
    stream, clock = FakeTTY(), FakeClock()
    with Progress(total=4, label="grid", stream=stream, width=8, min_interval=0.0, clock=clock) as bar:
        clock.now += 2.0
        bar.update()
        assert stream.getvalue().split("\r")[-1] == "grid [##------] 1/4  25% 0:02 < 0:06"
        clock.now += 2.0
        bar.update(3)
    lines = stream.getvalue()
    assert lines.endswith("grid [########] 4/4 100% 0:04 < 0:00\n")
    assert lines.count("\n") == 1  # one line, redrawn in place


def test_non_terminal_streams_get_nothing():
    stream = io.StringIO()  # a file, pipe or CI log
    with Progress(total=3, stream=stream, min_interval=0.0) as bar:
        bar.update(3)
    assert stream.getvalue() == ""
    assert list(progress(range(5), stream=stream)) == list(range(5))
    assert stream.getvalue() == ""


def test_streams_without_isatty_or_closed_are_not_terminals():
    closed = FakeTTY()
    closed.close()
    assert not is_terminal(object()) and not is_terminal(closed) and is_terminal(FakeTTY())


def test_redraws_are_throttled_but_the_last_step_is_drawn():
    stream, clock = FakeTTY(), FakeClock()
    bar = Progress(total=100, stream=stream, min_interval=1.0, clock=clock)
    for _ in range(100):
        clock.now += 0.001
        bar.update()
    drawn = stream.getvalue().split("\r")[1:]
    assert len(drawn) == 2  # the first step and the last
    assert "100/100" in drawn[-1]


def test_a_shorter_line_wipes_the_longer_one():
    stream, clock = FakeTTY(), FakeClock()
    bar = Progress(total=None, label="bench", stream=stream, min_interval=0.0, clock=clock)
    clock.now += 3600.0
    bar.update(12345)
    bar.done = 0
    bar.update(1)
    first, second = stream.getvalue().split("\r")[1:]
    assert first == "bench 12345 done 1:00:00" and second.startswith("bench 1 done 1:00:00")
    assert len(second) == len(first)


def test_iterator_wrapper_counts_every_item_and_closes():
    stream = FakeTTY()
    items = list(progress(["a", "b", "c"], label="folds", stream=stream, min_interval=0.0))
    assert items == ["a", "b", "c"]
    assert stream.getvalue().rstrip("\n").split("\r")[-1].startswith("folds [") and "3/3" in stream.getvalue()
    assert stream.getvalue().endswith("\n")


@pytest.mark.parametrize("options, message", [
    (dict(total=-1), "total"), (dict(total=2.5), "total"), (dict(total=True), "total"),
    (dict(total=3, width=0), "width"), (dict(total=3, min_interval=-1.0), "min_interval"),
])
def test_bad_arguments(options, message):
    with pytest.raises(ValueError, match=message):
        Progress(stream=FakeTTY(), **options)
    with pytest.raises(ValueError, match=message):
        progress([], stream=FakeTTY(), **options)


def test_bad_step_count():
    bar = Progress(total=3, stream=FakeTTY())
    with pytest.raises(ValueError, match="steps"):
        bar.update(-1)
