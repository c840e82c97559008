#!/usr/bin/env python3
"""Held-out trajectories for the scheduler: none of them is in the repository, none was used to tune it.

    python3 Tests/HeldOutTraces/make_traces.py OUT_DIR [--tracktable WHEEL]
    .build/release/tern-bench policy --traces OUT_DIR --markdown

Two kinds (CSV `time,lat,lon`, ISO-8601 UTC, as TraceLoader reads), and `motion-classes.txt` naming
each file's motion class (vessel, car, walk/cycle) for tern-bench's per-class figures:

* `ais-nyharbor-*.csv`: AIS vessel tracks in New York Harbor, 2020-12-08, from the tracktable-data
  package (PyPI, `python_example_data/NYHarbor_2020_12_08.traj`; US MarineCadastre AIS, public data).
  The repository's own ship traces are Virginia Beach, 2020-06; these are another place and season.
  Pass the wheel (`pip download --no-deps tracktable-data`); tracks of at least 2 h with a 40 %+
  moving share are kept, at most 4.
* `synth-*.csv`: trajectories synthesised at 1 Hz from documented motion models, seeded:
  - `synth-van`: urban delivery: a Manhattan grid (100-250 m blocks), the Intelligent Driver Model's
    comfortable acceleration 1.0 m/s^2 and deceleration 1.5 m/s^2 (Treiber, Hennecke & Helbing,
    Phys. Rev. E 62, 1805, 2000), cruise 8-14 m/s, corners taken at the speed a lateral
    acceleration of 2 m/s^2 allows on a 10 m radius, a traffic light at 30 % of corners (wait 5-60 s),
    a delivery stop every 0.6-1.8 km (2-8 min).
  - `synth-walker`: the random-waypoint model (Johnson & Maltz, 1996): waypoints within 2 km,
    walking speed 1.1-1.6 m/s (pedestrian free walking speeds, Fruin 1971: mean ~1.35 m/s), pauses
    0-300 s.
  - `synth-cyclist`: waypoints 300-900 m apart, 4-7 m/s, acceleration 0.8 m/s^2, lights at 40 % of
    waypoints (wait 5-40 s), one 20-minute stop.
  - `synth-motorway`: 28-33 m/s on curves of 800-3000 m radius (no more than ~1.2 m/s^2 lateral),
    a 15-minute service-area stop, 90 min.
"""
import csv, math, random, re, sys, zipfile
from datetime import datetime, timedelta, timezone

R = 6371008.8


def dest(lat, lon, d, bearing):
    d /= R; b = math.radians(bearing); p1 = math.radians(lat); l1 = math.radians(lon)
    p2 = math.asin(math.sin(p1) * math.cos(d) + math.cos(p1) * math.sin(d) * math.cos(b))
    l2 = l1 + math.atan2(math.sin(b) * math.sin(d) * math.cos(p1), math.cos(d) - math.sin(p1) * math.sin(p2))
    return math.degrees(p2), (math.degrees(l2) + 540) % 360 - 180


class Builder:
    """Integrates a point at 1 Hz: heading and speed change within acceleration limits."""

    def __init__(self, lat, lon, start):
        self.lat, self.lon, self.t, self.v, self.start = lat, lon, 0, 0.0, start
        self.rows = [(0, lat, lon)]

    def step(self, heading):
        if self.v > 0:
            self.lat, self.lon = dest(self.lat, self.lon, self.v, heading)
        self.t += 1
        self.rows.append((self.t, self.lat, self.lon))

    def wait(self, seconds):
        self.v = 0
        for _ in range(int(seconds)):
            self.step(0)

    def leg(self, heading, metres, cruise, accel, decel, end_speed=0.0):
        """Drive `metres` on `heading`, accelerating to `cruise`, braking to `end_speed` at the end."""
        left = metres
        while left > 0.5:
            brake = (self.v ** 2 - end_speed ** 2) / (2 * decel) if self.v > end_speed else 0
            if left <= brake + self.v:
                self.v = max(end_speed, self.v - decel)
            else:
                self.v = min(cruise, self.v + accel)
            self.v = max(self.v, 0.3) if left > 1 else self.v
            step = min(self.v, left)
            if step > 0:
                self.lat, self.lon = dest(self.lat, self.lon, step, heading)
            left -= step
            self.t += 1
            self.rows.append((self.t, self.lat, self.lon))

    def turn_arc(self, heading, turn, radius, speed):
        """Follow an arc of `radius` turning `turn` degrees at `speed`."""
        length = abs(math.radians(turn)) * radius
        steps = max(1, int(length / max(speed, 0.5)))
        for i in range(steps):
            h = heading + turn * (i + 0.5) / steps
            self.v = speed
            self.lat, self.lon = dest(self.lat, self.lon, length / steps, h)
            self.t += 1
            self.rows.append((self.t, self.lat, self.lon))
        return (heading + turn) % 360

    def write(self, path):
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["time", "lat", "lon"])
            for t, lat, lon in self.rows:
                stamp = (self.start + timedelta(seconds=t)).strftime("%Y-%m-%dT%H:%M:%SZ")
                w.writerow([stamp, f"{lat:.7f}", f"{lon:.7f}"])


START = datetime(2026, 4, 14, 7, 0, tzinfo=timezone.utc)


def van(rng):
    b = Builder(52.3702, 4.8952, START)
    b.wait(90)
    heading, since_delivery, next_delivery = 0.0, 0.0, rng.uniform(600, 1800)
    corner = math.sqrt(2.0 * 10)  # lateral 2 m/s^2 on a 10 m radius
    while b.t < 3 * 3600:
        block = rng.uniform(100, 250)
        light = rng.random() < 0.3
        b.leg(heading, block, rng.uniform(8, 14), 1.0, 1.5, end_speed=0 if light else corner)
        since_delivery += block
        if light:
            b.wait(rng.uniform(5, 60))
        if since_delivery >= next_delivery:
            b.leg(heading, 1, 1, 1, 1.5)
            b.wait(rng.uniform(120, 480))
            since_delivery, next_delivery = 0.0, rng.uniform(600, 1800)
        turn = rng.choice([0, 0, 90, -90])
        if turn:
            heading = b.turn_arc(heading, turn, 10, max(b.v, corner))
    b.wait(120)
    return b


def walker(rng):
    b = Builder(48.8566, 2.3522, START)
    home = (b.lat, b.lon)
    b.wait(60)
    while b.t < 2.5 * 3600:
        # Random waypoint within 2 km of the start: straight walk, then a pause.
        d, h = rng.uniform(100, 900), rng.uniform(0, 360)
        lat, lon = dest(b.lat, b.lon, d, h)
        if math.hypot((lat - home[0]) * 111e3, (lon - home[1]) * 73e3) > 2000:
            h = (h + 180) % 360
        b.leg(h, d, rng.uniform(1.1, 1.6), 0.5, 0.5)
        b.wait(rng.uniform(0, 300))
    return b


def cyclist(rng):
    b = Builder(55.6761, 12.5683, START)
    b.wait(60)
    heading, stopped = rng.uniform(0, 360), False
    while b.t < 2 * 3600:
        heading = (heading + rng.uniform(-100, 100)) % 360
        light = rng.random() < 0.4
        b.leg(heading, rng.uniform(300, 900), rng.uniform(4, 7), 0.8, 1.2, end_speed=0 if light else 3)
        if light:
            b.wait(rng.uniform(5, 40))
        if not stopped and b.t > 3600:
            b.leg(heading, 1, 1, 1, 1)
            b.wait(1200)
            stopped = True
    b.wait(60)
    return b


def motorway(rng):
    b = Builder(50.1109, 8.6821, START)
    b.wait(60)
    heading, stopped = 20.0, False
    b.leg(heading, 2000, 30, 1.2, 1.5, end_speed=28)
    while b.t < 90 * 60:
        radius = rng.uniform(800, 3000)
        speed = min(33, math.sqrt(1.2 * radius))
        heading = b.turn_arc(heading, rng.uniform(-40, 40), radius, speed)
        b.leg(heading, rng.uniform(1000, 5000), rng.uniform(28, 33), 0.8, 1.0, end_speed=speed)
        if not stopped and b.t > 40 * 60:
            b.leg(heading, 800, 15, 1, 1.5)
            b.wait(900)
            stopped = True
            b.leg(heading, 1500, 30, 1.2, 1.5, end_speed=28)
    b.leg(heading, 1500, 30, 1, 1.5)
    b.wait(60)
    return b


def nyharbor(wheel, out):
    name = "tracktable_data/python_example_data/NYHarbor_2020_12_08.traj"
    with zipfile.ZipFile(wheel) as z:
        text = z.read(name).decode()
    point = re.compile(r"(\d{9}),(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(-?\d+\.\d+),(-?\d+\.\d+)")
    names = []
    for line in text.splitlines():
        pts = point.findall(line)
        if len(pts) < 50:
            continue
        times = [datetime.strptime(p[1], "%Y-%m-%d %H:%M:%S") for p in pts]
        duration = (times[-1] - times[0]).total_seconds()
        if duration < 2 * 3600:
            continue
        moving = 0.0
        for a, b_, ta, tb in zip(pts, pts[1:], times, times[1:]):
            d = math.hypot((float(b_[3]) - float(a[3])) * 111e3, (float(b_[2]) - float(a[2])) * 84e3)
            dt = (tb - ta).total_seconds()
            if dt > 0 and d / dt > 0.5:
                moving += dt
        if moving / duration < 0.4:
            continue
        path = f"{out}/ais-nyharbor-{pts[0][0]}.csv"
        names.append(path.rsplit("/", 1)[1])
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["time", "lat", "lon"])
            last = None
            for p, t in zip(pts, times):
                if last is not None and t <= last:
                    continue
                w.writerow([t.strftime("%Y-%m-%dT%H:%M:%SZ"), p[3], p[2]])
                last = t
        if len(names) == 4:
            break
    return names


def main():
    out = sys.argv[1]
    wheel = sys.argv[sys.argv.index("--tracktable") + 1] if "--tracktable" in sys.argv else None
    classes = []
    for name, make, seed, motion in [("van", van, 11, "car"), ("walker", walker, 12, "walk/cycle"),
                                     ("cyclist", cyclist, 13, "walk/cycle"), ("motorway", motorway, 14, "car")]:
        b = make(random.Random(seed))
        b.write(f"{out}/synth-{name}.csv")
        classes.append((f"synth-{name}.csv", motion))
        print(f"synth-{name}: {b.t / 3600:.2f} h")
    if wheel:
        names = nyharbor(wheel, out)
        classes += [(name, "vessel") for name in names]
        print(f"ais-nyharbor: {len(names)} tracks")
    # The motion class of each file, as tern-bench reads it (FILE CLASS).
    with open(f"{out}/motion-classes.txt", "w") as f:
        f.writelines(f"{name} {motion}\n" for name, motion in sorted(classes))


if __name__ == "__main__":
    main()
