import math

from serverbench.analysis.second_stage import Comparison, distance_se, rank, touches

B = (-math.log(1.15), math.log(1.15))


def test_touching_ranked_nearest_first_and_capped():
    far = Comparison("a", 0.5, 0.4, 0.6, B)  # settled: no boundary inside
    near = Comparison("b", 0.13, 0.05, 0.25, B)
    mid = Comparison("c", 0.0, -0.3, 0.3, B)
    assert not touches(far) and touches(near) and touches(mid)
    assert distance_se(near) < distance_se(mid)
    assert rank([far, mid, near], 5) == ["b", "c"]
    assert rank([far, mid, near], 1) == ["b"]
    assert rank([far, mid, near], 0) == []


def test_one_entry_per_config():
    c1 = Comparison("x", 0.0, -0.3, 0.3, B)
    c2 = Comparison("x", 0.13, 0.05, 0.25, B)
    assert rank([c1, c2], 5) == ["x"]
