"""deepcomm-tune's rules from medians, without a cluster: the fastest per size, a size only the
algorithms that ran there compete for, runs of one winner merged, each rule reaching up to the next
measured size, the last ending at the largest; and its table and argument errors.
    tune_rules_test.py PATH_TO_DEEPCOMM_TUNE"""
import importlib.machinery
import importlib.util
import sys
import unittest

loader = importlib.machinery.SourceFileLoader("deepcomm_tune", sys.argv.pop(1))
spec = importlib.util.spec_from_loader("deepcomm_tune", loader)
tune = importlib.util.module_from_spec(spec)
loader.exec_module(tune)


class Rules(unittest.TestCase):
    def test_fastest_per_size_merged_into_ranges(self):
        medians = {
            "ring": {8: 5.0, 64: 5.0, 512: 5.0, 4096: 1.0, 32768: 1.0},
            "tree": {8: 1.0, 64: 2.0, 512: 3.0, 4096: 4.0, 32768: 9.0},
            "hierarchical": {512: 2.5},  # ran (applied) at one size only
        }
        rules = tune.rules_of("allreduce", medians, 4, 8)
        scope = {"collective": "allreduce", "hosts": 4, "ranks": 8}
        self.assertEqual(rules, [
            dict(scope, algorithm="tree", min_bytes=8, max_bytes=511),
            dict(scope, algorithm="hierarchical", min_bytes=512, max_bytes=4095),
            dict(scope, algorithm="ring", min_bytes=4096, max_bytes=32768),
        ])

    def test_one_size(self):
        self.assertEqual(tune.rules_of("broadcast", {"pipeline": {64: 3.0}, "hierarchical": {64: 4.0}}, 2, 4),
                         [{"collective": "broadcast", "algorithm": "pipeline", "min_bytes": 64, "max_bytes": 64,
                           "hosts": 2, "ranks": 4}])

    def test_table_marks_the_fastest_and_gaps(self):
        table = tune.median_table("all_reduce", {"ring": {8: 5.0, 64: 1.0}, "hierarchical": {64: 2.0}})
        lines = table.splitlines()
        self.assertEqual(lines[2].split(), ["8", "5.0", "-", "ring"])
        self.assertEqual(lines[3].split(), ["64", "1.0", "2.0", "ring"])

    def test_arguments(self):
        with self.assertRaisesRegex(tune.Failed, "give the launcher after --"):
            tune.parse_args(["-o", "x.json"])
        with self.assertRaisesRegex(tune.Failed, "no launcher after --"):
            tune.parse_args(["-o", "x.json", "--"])
        with self.assertRaisesRegex(tune.Failed, "unknown collective 'allreduce'"):
            tune.parse_args(["-o", "x.json", "--collectives", "allreduce", "--", "deepcomm-run"])
        a = tune.parse_args(["-o", "x.json", "--", "deepcomm-run", "-n", "8"])
        self.assertEqual(a.launcher, ["deepcomm-run", "-n", "8"])
        self.assertEqual(a.collectives, ["all_reduce"])


if __name__ == "__main__":
    unittest.main()
