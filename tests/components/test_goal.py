"""The GOAL reader and writer: LogGOPSim's text format, its errors, and round trips (issue 34)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ibfabric.components.hca.goal import parse_goal, read_goal, to_goal
from ibfabric.components.hca.schedule import ANY, Op, Schedule, ScheduleBuilder, ScheduleError
from ibfabric.plugins.workloads import BUILTINS, build_schedule

#: what LogGOPSim's Schedgen writes for a binomial broadcast (its layout: labels, dependencies after
#: each operation, blank lines between ranks), and txt2bin's optional fields and comments
SCHEDGEN_STYLE = """num_ranks 4

rank 0 {
l1: send 1b to 1 tag 0
l2: send 1b to 2 tag 0
}

rank 1 {
l1: recv 1b from 0 tag 0
l2: send 1b to 3 tag 0
l2 requires l1
}

rank 2 {
l1: recv 1b from 0 tag 0
l2: calc 250 cpu 1
l2 requires l1
}

rank 3 {
// a comment line
l1: recv 1b from -1 tag -1 cpu 0 nic 0   /* any source, any tag */
l5: calc 10
l5 irequires l1
}
"""


class TestRead:
    def test_a_schedgen_file(self):
        s = parse_goal(SCHEDGEN_STYLE, "bt.goal")
        assert s.num_ranks == 4 and s.operations == 8
        assert s.ranks[1][1] == Op("send", "l2", 1, 3, 0, requires=(0,))
        assert s.ranks[2][1].cpu == 1 and s.ranks[2][1].size == 250
        recv = s.ranks[3][0]
        assert (recv.peer, recv.tag) == (ANY, ANY) and s.ranks[3][1].irequires == (0,)
        assert recv.location == "bt.goal:22:1"

    def test_optional_parts(self):
        text = "num_ranks 2\nrank 0 {\nsend 5 b to 1\n}\nrank 1 {\nrecv 5b from 0\n}"  # no labels, tags, final newline
        s = parse_goal(text)
        assert s.ranks[0][0] == Op("send", "", 5, 1, 0)
        assert s.ranks[1][0].tag == 0

    def test_what_txt2bin_takes_on_one_line(self):
        s = parse_goal("num_ranks 2 rank 0 { l1: send 4b to 1 tag 2\n} rank 1 {\nl1: recv 4b from 0 tag 2\n}")
        assert s.ranks[0][0].describe() == "send 4b to 1 tag 2"

    def test_a_rank_without_a_block_does_nothing(self):
        s = parse_goal("num_ranks 3\nrank 1 {\nl1: calc 4\n}\n")
        assert s.ranks[0] == () == s.ranks[2]

    def test_forward_references(self):
        s = parse_goal("num_ranks 1\nrank 0 {\nl2 requires l1\nl1: calc 1\nl2: calc 2\n}\n")
        assert s.ranks[0][1].requires == (0,)

    def test_read_goal(self, tmp_path):
        f = tmp_path / "x.goal"
        f.write_bytes(b"num_ranks 1\nrank 0 {\nl1: calc 1 \xff\n}\n")
        with pytest.raises(ScheduleError, match=r"x\.goal:3:12: byte 0xff is not UTF-8"):
            read_goal(f)
        f.write_text(SCHEDGEN_STYLE)
        assert read_goal(f).name == "x"


class TestErrors:
    @pytest.mark.parametrize("text, message", [
        ("num_ranks 2\nrank 0 {\nl1: send 8 to 1\n}\n", "f.goal:3:12: expected 'b' but found 'to'"),
        ("num_ranks 2\nrank 0 {\nl1: send 8b from 1\n}\n", "f.goal:3:13: expected 'to' but found 'from'"),
        ("num_ranks 2\nrank 0 {\nl1: send 8b to -1\n}\n", "f.goal:3:16: expected a number but found '-1'"),
        ("num_ranks 2\nrank 0 {\nl1: calc 3 }\n", "f.goal:3:12: expected 'cpu' or a new line but found '}'"),
        ("num_ranks 2\nrank 0 {\nl1: calc 3\n", "f.goal:4:1: unexpected end of file, expected"),
        ("rank 0 {\n}\n", "f.goal:1:1: a rank block before num_ranks"),
        ("num_ranks 2\nnum_ranks 3\n", "f.goal:2:1: num_ranks is given twice"),
        ("num_ranks 2\nrank 2 {\n}\n", "f.goal:2:1: rank 2 is out of range (num_ranks is 2)"),
        ("num_ranks 2\nrank 1 {\n}\nrank 1 {\n}\n", "f.goal:4:1: rank 1 has a second block"),
        ("num_ranks 1\nrank 0 {\nl1: calc 1\nl1: calc 2\n}\n", "f.goal:4:1: rank 0: label 'l1' is defined twice"
                                                                " (first at f.goal:3:1)"),
        ("num_ranks 1\nrank 0 {\nl1: calc 1\nl1 requires lx1\n}\n", "f.goal:4:13: rank 0: label 'lx1' is not"
                                                                    " defined; did you mean 'l1'?"),
        ("num_ranks 1\nrank 0 {\na: calc 1\nb: calc 1\na requires b\nb irequires a\n}\n",
         "f.goal:3:1: rank 0, a: a dependency cycle: a -> b -> a"),
        ("num_ranks 2\nrank 0 {\nl1: send 8b to 2\n}\n", "f.goal:3:1: rank 0, l1: send 8b to 2 tag 0: rank 2 does"
                                                         " not exist"),
        ("", "f.goal:1:1: no 'num_ranks N' line"),
    ])
    def test_one_line_errors_with_a_location(self, text, message):
        with pytest.raises(ScheduleError) as info:
            parse_goal(text, "f.goal")
        assert str(info.value).startswith(message), str(info.value)
        assert "\n" not in str(info.value)


@st.composite
def schedules(draw) -> Schedule:
    """Random checked schedules: sends with their receives, calcs, dependencies on earlier operations."""
    n = draw(st.integers(1, 5))
    b = ScheduleBuilder(n)
    for _ in range(draw(st.integers(0, 25))):
        kind = draw(st.sampled_from(["msg", "calc"]))
        r = draw(st.integers(0, n - 1))

        def deps(rank):
            k = len(b.progs[rank])
            return draw(st.lists(st.integers(0, k - 1), max_size=3)) if k else []

        if kind == "calc" or n == 1:
            b.calc(r, draw(st.integers(0, 10**6)), requires=deps(r), irequires=deps(r), cpu=draw(st.integers(0, 3)))
        else:
            dst = draw(st.integers(0, n - 1).filter(lambda x: x != r))
            size = draw(st.integers(0, 1 << 40))
            tag = draw(st.integers(0, 2**31))
            b.send(r, dst, size, tag, requires=deps(r), irequires=deps(r))
            src = draw(st.sampled_from([r, ANY]))
            b.recv(dst, src, size, draw(st.sampled_from([tag, ANY])), requires=deps(dst))
    return b.build()


class TestRoundTrip:
    @settings(max_examples=150, deadline=None)
    @given(schedules())
    def test_generator_to_goal_to_parse(self, s):
        text = to_goal(s)
        back = parse_goal(text, "rt.goal")
        assert back == s
        assert to_goal(back) == text

    @pytest.mark.parametrize("name", sorted(BUILTINS))
    @pytest.mark.parametrize("p", [2, 3, 7, 8])
    def test_every_builtin(self, name, p):
        s = build_schedule(name, BUILTINS[name][0], p, 12345, reps=2)
        assert parse_goal(to_goal(s)) == s

    def test_unlabelled_operations_get_free_labels(self):
        s = parse_goal("num_ranks 1\nrank 0 {\no1: calc 1\ncalc 2\n}\n")
        back = parse_goal(to_goal(s))
        assert [op.label for op in back.ranks[0]] == ["o1", "o2"]
