#!/usr/bin/env python3
"""Unit tests for checks.py's reading of /sys/kernel/debug/gpio, its scoring of the scheduler's power
transitions and of the service's sandbox (no hardware, no root, about 0.3 s):
    python3 -m unittest board/hil/test_checks.py      (from the repository root)

The samples are laid out with the kernel's own format strings (drivers/gpio/gpiolib.c,
gpiolib_seq_show and gpiolib_dbg_show):
  header  "%s: GPIOs %d-%d" (<= 6.1), "%s: GPIOs %u-%u" (6.2-6.16), "%s: %u GPIOs" (>= 6.17),
          then ", parent: %s/%s", ", %s" (the chip's label), ", can sleep", ":"
  line    " gpio-%-3d (%-20.20s|%-20.20s) %s %s %s%s" (name|consumer, "out"/"in ", "hi"/"lo"/"?  ",
          "IRQ ", "ACTIVE LOW") while requested, " gpio-%-3d (%-20.20s)" while free but named;
          the number is base + offset up to 6.16, the offset from 6.17 on.
The 6.1 and 6.12 strings are those in Debian's kernel images (bookworm's 6.1.0 amd64, trixie's
6.12 arm64, the emulated Pi's); the 6.17 change is commit 1bec20dfa3d8 ("gpiolib: don't use GPIO
global numbers in debugfs output"). Line names are the Pi 3 B device tree's gpio-line-names.
"""
import argparse, os, sys, tempfile, unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402

# Raspberry Pi OS before 6.6 (downstream pinctrl-bcm2835 with a fixed base 0), Pi 3 B: the old
# format, tern holding BCM17 high.
OLD_BASE0 = "\n".join([
    "gpiochip0: GPIOs 0-53, parent: platform/3f200000.gpio, pinctrl-bcm2835:",
    " gpio-0   (ID_SDA              )",
    " gpio-1   (ID_SCL              )",
    " gpio-16  (GPIO16              )",
    " gpio-17  (GPIO17              |tern                ) out hi ",
    " gpio-18  (GPIO18              )",
    "",
    "gpiochip1: GPIOs 504-511, parent: platform/soc:firmware:gpio, raspberrypi-exp-gpio, can sleep:",
    " gpio-504 (BT_ON               )",
    " gpio-506 (STATUS_LED          |ACT                 ) out lo ACTIVE LOW",
    "",
])

# Debian bookworm, Linux 6.1 (x86_64, CONFIG_ARCH_NR_GPIO=1024: dynamic bases counted down from
# 1024): the x86 rig's gpio-sim chip (board/hil/guest-uart-checks.sh: 32 lines, label
# tern-hil-sim, lines 4 and 17 named), tern holding line 17 low.
OLD_GPIOSIM_61 = "\n".join([
    "gpiochip0: GPIOs 992-1023, parent: platform/gpio-sim.0, tern-hil-sim:",
    " gpio-996 (GPIO4               )",
    " gpio-1009 (GPIO17              |tern                ) out lo ",
    "",
])

# Debian trixie, Linux 6.12 (the emulated Pi 3 B of board/hil/pi/): dynamic bases from 512 (since
# 6.2), tern holding BCM17 with an active-low request, the line low (the supply on).
NEW_BASE512_612 = "\n".join([
    "gpiochip0: GPIOs 512-565, parent: platform/3f200000.gpio, pinctrl-bcm2835:",
    " gpio-512 (ID_SDA              )",
    " gpio-513 (ID_SCL              )",
    " gpio-528 (GPIO16              )",
    " gpio-529 (GPIO17              |tern                ) out lo ACTIVE LOW",
    " gpio-530 (GPIO18              )",
    "",
    "gpiochip1: GPIOs 566-573, parent: platform/soc:firmware:gpio, raspberrypi-exp-gpio, can sleep:",
    " gpio-566 (BT_ON               )",
    " gpio-568 (STATUS_LED          |ACT                 ) out hi ACTIVE LOW",
    "",
])

# The same with the "(dbg)" tag some reports show before "GPIOs" (not in any source read; tolerated).
NEW_DBG_TAG = NEW_BASE512_612.replace("gpiochip0: GPIOs", "gpiochip0: (dbg) GPIOs")

# Linux >= 6.17: "N GPIOs" and offsets, tern holding BCM17 high.
RELATIVE_617 = "\n".join([
    "gpiochip0: 54 GPIOs, parent: platform/3f200000.gpio, pinctrl-bcm2835:",
    " gpio-0   (ID_SDA              )",
    " gpio-17  (GPIO17              |tern                ) out hi ",
    " gpio-18  (GPIO18              )",
    "",
    "gpiochip1: 8 GPIOs, parent: platform/soc:firmware:gpio, raspberrypi-exp-gpio, can sleep:",
    " gpio-2   (STATUS_LED          |ACT                 ) out hi ACTIVE LOW",
    "",
])

# A Raspberry Pi 5 on Raspberry Pi OS's 6.6 (gpio-brcmstb, as in raspberrypi/linux#6037): an input
# held active low, for the direction and flag parsing.
PI5_66 = "\n".join([
    "gpiochip0: GPIOs 512-543, parent: platform/107d508500.gpio, gpio-brcmstb@107d508500:",
    " gpio-513 (2712_BOOT_CS_N      |spi10 CS0           ) out hi ACTIVE LOW",
    " gpio-532 (PWR_GPIO            |pwr_button          ) in  hi ACTIVE LOW",
    "",
])

# Nothing holds the line: free and named (listed by name only), free and unnamed (not listed).
FREE_NAMED = NEW_BASE512_612.replace(
    " gpio-529 (GPIO17              |tern                ) out lo ACTIVE LOW", " gpio-529 (GPIO17              )")
FREE_UNNAMED = "\n".join([
    "gpiochip0: GPIOs 512-543, parent: platform/gpio-sim.0, tern-sim:",
    " gpio-515 (GPS_POWER           )",
    "",
])

# Not a format this parser knows (a made-up future layout).
UNKNOWN_FORMAT = "\n".join([
    "chip gpiochip0 [pinctrl-bcm2835] lines=54",
    "  17 GPIO17 consumer=tern output high",
    "",
])


class ParseDebugfsGpio(unittest.TestCase):
    def level(self, text, chip="gpiochip0", line=17):
        return checks.parse_debugfs_gpio(text, chip, line)

    def test_old_format_base0(self):
        lv = self.level(OLD_BASE0)
        self.assertEqual((lv.offset, lv.name, lv.consumer, lv.direction, lv.high, lv.active_low),
                         (17, "GPIO17", "tern", "out", True, False))
        self.assertEqual(self.level(OLD_BASE0, "gpiochip1", 2).high, False)

    def test_old_format_high_base(self):
        lv = self.level(OLD_GPIOSIM_61)
        self.assertEqual((lv.offset, lv.direction, lv.high), (17, "out", False))
        self.assertIsNone(self.level(OLD_GPIOSIM_61, line=4))        # named, free

    def test_new_format_base512(self):
        lv = self.level(NEW_BASE512_612)
        self.assertEqual((lv.offset, lv.name, lv.high, lv.active_low), (17, "GPIO17", False, True))
        self.assertEqual(self.level(NEW_BASE512_612, "gpiochip1", 2).high, True)

    def test_dbg_tag(self):
        self.assertEqual(self.level(NEW_DBG_TAG), self.level(NEW_BASE512_612))

    def test_relative_numbering(self):
        lv = self.level(RELATIVE_617)
        self.assertEqual((lv.offset, lv.high, lv.active_low), (17, True, False))
        self.assertEqual(self.level(RELATIVE_617, "gpiochip1", 2).name, "STATUS_LED")

    def test_input_and_active_low(self):
        lv = self.level(PI5_66, line=20)
        self.assertEqual((lv.name, lv.direction, lv.high, lv.active_low), ("PWR_GPIO", "in", True, True))

    def test_unreadable_value(self):
        text = NEW_BASE512_612.replace(") out lo ACTIVE LOW", ") out ?   IRQ ACTIVE LOW")
        lv = self.level(text)
        self.assertEqual((lv.direction, lv.high, lv.active_low), ("out", None, True))

    def test_line_by_name(self):
        for text in (OLD_BASE0, NEW_BASE512_612, RELATIVE_617):
            self.assertEqual(self.level(text, line="GPIO17").offset, 17)
        self.assertEqual(self.level(NEW_BASE512_612, line="17").offset, 17)

    def test_chip_by_number_path_or_label(self):
        for chip in ("0", "/dev/gpiochip0", "pinctrl-bcm2835"):
            self.assertEqual(self.level(NEW_BASE512_612, chip).offset, 17)

    def test_line_not_present(self):
        self.assertIsNone(self.level(FREE_NAMED))                     # free, named
        self.assertIsNone(self.level(FREE_UNNAMED, "gpiochip0", 17))  # free, unnamed: not listed
        self.assertIsNone(self.level(NEW_BASE512_612, line="GPS_POWER"))

    def test_chip_not_present(self):
        with self.assertRaisesRegex(checks.GpioDebugfsError, r"no chip 'gpiochip4'.*gpiochip0, gpiochip1.*gpiodetect"):
            self.level(NEW_BASE512_612, "gpiochip4")

    def test_unknown_format(self):
        with self.assertRaisesRegex(checks.GpioDebugfsError, r"no chip header this checker knows.*new kernel format"):
            self.level(UNKNOWN_FORMAT)
        with self.assertRaisesRegex(checks.GpioDebugfsError, r"empty"):
            self.level("")

    def test_unknown_line_format(self):
        text = NEW_BASE512_612.replace(") out lo ACTIVE LOW", ") driven-low")
        with self.assertRaisesRegex(checks.GpioDebugfsError, r"line 17 is listed in a format this checker does not know"):
            self.level(text)
        text = "gpiochip0: GPIOs 512-565, parent: platform/3f200000.gpio, pinctrl-bcm2835:\n  pin 17: out 1\n"
        with self.assertRaisesRegex(checks.GpioDebugfsError, r"lines .* in a format this checker does not know"):
            self.level(text)


class DebugfsLineReads(unittest.TestCase):
    """DebugfsLine on a file standing in for /sys/kernel/debug/gpio: the on/off state and the reasons."""

    def reader(self, text, active_low, line=17):
        f = tempfile.NamedTemporaryFile("w", suffix=".gpio", delete=False)
        f.write(text)
        f.close()
        self.addCleanup(os.unlink, f.name)
        return checks.DebugfsLine("gpiochip0", line, active_low, path=f.name)

    def test_on_off_with_active_low(self):
        self.assertIs(self.reader(NEW_BASE512_612, True).read(), True)     # low, active low: on
        self.assertIs(self.reader(NEW_BASE512_612, False).read(), False)
        self.assertIs(self.reader(RELATIVE_617, False).read(), True)

    def test_reasons(self):
        r = self.reader(FREE_NAMED, False)
        self.assertIsNone(r.read())
        self.assertRegex(r.problem, r"not listed as held.*gpioinfo gpiochip0")
        r = self.reader(UNKNOWN_FORMAT, False)
        self.assertIsNone(r.read())
        self.assertRegex(r.worst(), r"no chip header")
        r = checks.DebugfsLine("gpiochip0", 17, False, path=os.path.join(tempfile.gettempdir(), "no-such-debugfs-gpio"))
        self.assertIsNone(r.read())
        self.assertRegex(r.problem, r"debugfs is not mounted.*mount -t debugfs none /sys/kernel/debug")


class PowerLineView(unittest.TestCase):
    """Which independent view of the power line the power and scheduler checks use, by power method."""

    def view(self, power, line_value_file=None):
        c = checks.Checks.__new__(checks.Checks)
        c.a = argparse.Namespace(line_value_file=line_value_file)
        c.power = checks.Power({"power": power}, lambda chip: None)
        return c.line_view()

    def test_gpio_reads_debugfs_or_the_value_file(self):
        v = self.view({"method": "gpio", "chip": "gpiochip0", "line": "GPIO17", "active_low": True})
        self.assertIsInstance(v, checks.DebugfsLine)
        self.assertEqual((v.chip, v.line, v.active_low), ("gpiochip0", "GPIO17", True))
        self.assertIsInstance(self.view({"method": "gpio", "line": 17}, "/sys/x/sim_gpio17/value"), checks.ValueFileLine)

    def test_other_methods_have_none(self):
        for m in ("l76x", "pmtk-standby", "ubx-backup", "none"):
            self.assertIsNone(self.view({"method": m}))


if __name__ == "__main__":
    unittest.main()


class CompareTransitions(unittest.TestCase):
    """The scheduler check's verdict: tern's power log against the line's transitions."""
    T0 = 1000.0

    def test_a_well_sampled_transition_at_tern_moment_passes(self):
        line = [(self.T0 + 10.02, "on", self.T0 + 10.0)]
        problems, unjudged, worst, resolution = checks.compare_transitions(line, [(self.T0 + 10.01, "on")], self.T0)
        self.assertEqual((problems, unjudged), ([], []))
        self.assertEqual(worst, 0.0)
        self.assertAlmostEqual(resolution, 0.02)

    def test_tern_late_by_more_than_the_limit_fails(self):
        line = [(self.T0 + 10.02, "on", self.T0 + 10.0)]
        problems, _, worst, _ = checks.compare_transitions(line, [(self.T0 + 10.5, "on")], self.T0)
        self.assertEqual(len(problems), 1)
        self.assertAlmostEqual(worst, 0.48)

    def test_a_stalled_sampler_leaves_the_transition_unjudged_instead_of_scoring_a_gap_of_zero(self):
        # The sampler stalled for 1.5 s around the change; tern logged it 1.2 s off the true moment,
        # inside the interval, which scored "gap 0 ms" before the interval was bounded.
        line = [(self.T0 + 11.5, "off", self.T0 + 10.0)]
        problems, unjudged, worst, resolution = checks.compare_transitions(line, [(self.T0 + 11.2, "off")], self.T0)
        self.assertEqual(worst, 0.0)
        self.assertAlmostEqual(resolution, 1.5)
        self.assertEqual(problems, [])
        self.assertEqual(len(unjudged), 1)
        self.assertIn("cannot be judged", unjudged[0])

    def test_a_state_log_point_has_no_interval(self):
        problems, unjudged, _, resolution = checks.compare_transitions([(self.T0 + 5, "on")], [(self.T0 + 5.05, "on")], self.T0)
        self.assertEqual((problems, unjudged, resolution), ([], [], 0.0))

    def test_a_transition_tern_did_not_log_fails(self):
        line = [(self.T0 + 5.01, "on", self.T0 + 5.0), (self.T0 + 9.01, "off", self.T0 + 9.0)]
        problems, _, _, _ = checks.compare_transitions(line, [(self.T0 + 5.0, "on")], self.T0)
        self.assertEqual(problems, ["the line went off at +9.0 s, tern did not log it"])

    def test_a_state_tern_got_wrong_fails(self):
        line = [(self.T0 + 5.01, "on", self.T0 + 5.0)]
        problems, _, _, _ = checks.compare_transitions(line, [(self.T0 + 5.0, "off")], self.T0)
        self.assertEqual(len(problems), 1)


class SplitAtStop(unittest.TestCase):
    """The stop's power-off is checked for being there, not timed against the journal's late stamp."""
    T0, STOP = 1000.0, 1300.0

    def test_the_stop_power_off_logged_late_is_not_judged_as_a_scheduler_gap(self):
        # The emulated Pi: the line off 30 ms after the stop, tern's line stamped 0.3 s later.
        line = [(self.T0 + 5.01, "on", self.T0 + 5.0), (self.STOP + 0.05, "off", self.STOP + 0.02)]
        tern = [(self.T0 + 5.0, "on"), (self.STOP + 0.33, "off")]
        line_run, tern_run, problems, detail = checks.split_at_stop(line, tern, self.STOP)
        self.assertEqual((line_run, tern_run, problems), (line[:1], tern[:1], []))
        self.assertIn("20 ms after the stop request", detail)

    def test_a_receiver_left_on_at_the_stop_fails(self):
        line = [(self.T0 + 5.01, "on", self.T0 + 5.0)]
        tern = [(self.T0 + 5.0, "on"), (self.STOP + 0.3, "off")]
        _, _, problems, _ = checks.split_at_stop(line, tern, self.STOP)
        self.assertEqual(len(problems), 1)

    def test_a_receiver_already_off_at_the_stop_has_nothing_to_check(self):
        line = [(self.T0 + 5.01, "on", self.T0 + 5.0), (self.T0 + 9.01, "off", self.T0 + 9.0)]
        tern = [(self.T0 + 5.0, "on"), (self.T0 + 9.0, "off")]
        line_run, tern_run, problems, detail = checks.split_at_stop(line, tern, self.STOP)
        self.assertEqual((line_run, tern_run, problems), (line, tern, []))
        self.assertIn("off when the daemon stopped", detail)

    def test_a_power_on_racing_the_stop_request_is_the_schedulers_and_judged(self):
        # The emulated Pi, 2026-11-29: a scheduled power-on 0.1 s after `systemctl stop`, logged before
        # tern logged catching the signal 0.4 s after the request; then the stop's power-off.
        line = [(self.STOP + 0.11, "on", self.STOP + 0.10), (self.STOP + 0.56, "off", self.STOP + 0.55)]
        tern = [(self.STOP + 0.10, "on"), (self.STOP + 0.85, "off")]
        line_run, tern_run, problems, detail = checks.split_at_stop(line, tern, self.STOP, self.STOP + 0.4)
        self.assertEqual((line_run, tern_run, problems), (line[:1], tern[:1], []))
        self.assertEqual(checks.compare_transitions(line_run, tern_run, self.T0)[0], [])
        self.assertIn("550 ms after the stop request", detail)

    def test_a_power_on_after_the_signal_was_caught_fails(self):
        line = [(self.STOP + 0.51, "on", self.STOP + 0.50), (self.STOP + 0.71, "off", self.STOP + 0.70)]
        tern = [(self.STOP + 0.50, "on"), (self.STOP + 0.90, "off")]
        _, _, problems, _ = checks.split_at_stop(line, tern, self.STOP, self.STOP + 0.4)
        self.assertEqual(len(problems), 1)

    def test_a_scheduled_off_just_before_the_stop_stays_judged(self):
        line = [(self.STOP - 0.49, "off", self.STOP - 0.5)]
        tern = [(self.STOP - 0.2, "off")]
        line_run, tern_run, _, _ = checks.split_at_stop(line, tern, self.STOP)
        problems, _, _, _ = checks.compare_transitions(line_run, tern_run, self.T0)
        self.assertEqual(len(problems), 1)


class HardeningProblems(unittest.TestCase):
    """The service check reads /proc/PID/status of the installed service's process."""
    HARDENED = "\n".join(["Name:\ttern", "Uid:\t998\t998\t998\t998", "Gid:\t998\t998\t998\t998",
                           "CapInh:\t0000000000000000", "CapPrm:\t0000000000000000", "CapEff:\t0000000000000000",
                           "NoNewPrivs:\t1", "Seccomp:\t2", "Seccomp_filters:\t3", ""])

    def test_the_hardened_unit_passes(self):
        self.assertEqual(checks.hardening_problems(self.HARDENED, "tern", 998), [])

    def test_root_fails(self):
        text = self.HARDENED.replace("Uid:\t998\t998\t998\t998", "Uid:\t0\t0\t0\t0")
        self.assertEqual(len(checks.hardening_problems(text, "tern", 998)), 1)

    def test_a_capability_fails(self):
        text = self.HARDENED.replace("CapEff:\t0000000000000000", "CapEff:\t0000000000000400")
        self.assertIn("CapEff 0000000000000400, not empty", checks.hardening_problems(text, "tern", 998))

    def test_no_seccomp_and_new_privileges_fail(self):
        text = self.HARDENED.replace("Seccomp:\t2", "Seccomp:\t0").replace("NoNewPrivs:\t1", "NoNewPrivs:\t0")
        self.assertEqual(len(checks.hardening_problems(text, "tern", 998)), 2)


class GGAPosition(unittest.TestCase):
    """The firstfix check reads each fix's position and HDOP from GGA."""

    def test_north_east_with_hdop(self):
        line = b"$GPGGA,120000.000,5231.2005,N,01324.2973,E,1,08,0.95,45.3,M,47.2,M,,*5A"
        lat, lon, hdop = checks.gga_position(line)
        self.assertAlmostEqual(lat, 52 + 31.2005 / 60, places=7)
        self.assertAlmostEqual(lon, 13 + 24.2973 / 60, places=7)
        self.assertEqual(hdop, 0.95)

    def test_south_west_are_negative(self):
        lat, lon, hdop = checks.gga_position(b"$GPGGA,120000.000,3351.0000,S,15112.0000,W,1,05,,10.0,M,,M,,*00")
        self.assertLess(lat, 0)
        self.assertLess(lon, 0)
        self.assertIsNone(hdop)

    def test_no_fix_is_none(self):
        self.assertIsNone(checks.gga_position(b"$GPGGA,120000.000,,,,,0,00,,,M,,M,,*66"))
        self.assertIsNone(checks.gga_position(b"$GPRMC,120000.000,A,5231.2005,N,01324.2973,E,0.02,31.66,291126,,,A*00"))


class NearestRank(unittest.TestCase):
    """The firstfix percentiles are Tern's (Statistics.percentile): rank round(p (n - 1)), ties up."""

    def test_a_tie_rounds_away_from_zero_as_swift_does(self):
        self.assertEqual(checks.nearest_rank([6, 1, 5, 2, 4, 3], 0.5), 4)   # rank 2.5 -> 3, not 2

    def test_p95_of_twenty_is_the_nineteenth(self):
        self.assertEqual(checks.nearest_rank(range(1, 21), 0.95), 19)

    def test_no_values_no_percentile(self):
        self.assertIsNone(checks.nearest_rank([], 0.5))


class FirstFixReport(unittest.TestCase):
    """first_fix_report scores hot starts of a still receiver against its settled position."""
    HOME = (52.52, 13.405)

    def start(self, first_errors_m, settled_noise_m=1.0, seconds=39):
        """One start: fix k (one a second) is first_errors_m[k] metres north of HOME, later ones on
        HOME, settled_noise_m north and south in turn (the settled median: HOME, their p95: the noise)."""
        fixes = []
        for k in range(seconds):
            north = first_errors_m[k] if k < len(first_errors_m) else settled_noise_m * (0, 1, -1)[k % 3]
            fixes.append((float(k), self.HOME[0] + north / 111195.0, self.HOME[1], 1.0))
        return fixes

    def test_the_first_fixes_errors_are_measured_from_the_settled_position(self):
        r = checks.first_fix_report([self.start([8, 4, 2])] * 5, settled_after=30)
        self.assertAlmostEqual(r["by_index"][0]["median_m"], 8.0, delta=0.05)
        self.assertAlmostEqual(r["by_index"][1]["median_m"], 4.0, delta=0.05)
        self.assertAlmostEqual(r["settled_p95_m"], 1.0, delta=0.1)

    def test_the_warm_up_suggested_is_the_first_whose_fix_is_as_good_as_a_settled_one(self):
        r = checks.first_fix_report([self.start([8, 4, 2, 1.2])] * 5, settled_after=30)
        # the bar is 1.5 x the settled p95 (1 m): the fix at 2 s (2 m) fails it, the one at 3 s (1.2 m) passes
        self.assertEqual(r["suggested_warm_up_s"], 3.0)

    def test_a_receiver_settled_from_its_first_fix_needs_no_warm_up(self):
        r = checks.first_fix_report([self.start([])] * 5, settled_after=30)
        self.assertEqual(r["suggested_warm_up_s"], 0.0)

    def test_one_slow_start_in_ten_sets_the_warm_up(self):
        starts = [self.start([])] * 9 + [self.start([20, 20, 20, 20, 20, 20])]   # p95 of 10: the worst
        r = checks.first_fix_report(starts, settled_after=30)
        self.assertEqual(r["suggested_warm_up_s"], 10.0)

    def test_a_receiver_that_has_not_converged_within_ten_seconds_gets_no_suggestion(self):
        r = checks.first_fix_report([self.start([30] * 15)] * 3, settled_after=30)
        self.assertIsNone(r["suggested_warm_up_s"])

    def test_no_settled_fix_gives_no_report(self):
        self.assertIsNone(checks.first_fix_report([self.start([8, 4], seconds=10)], settled_after=30))
