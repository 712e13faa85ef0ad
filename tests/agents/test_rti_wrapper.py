"""The RTI Perftest wrapper scripts (perftest-wrappers/rti/) without RTI Connext.

There is no Connext here: the refusals without NDDSHOME or a license run for real; the
path finding runs over a fake NDDSHOME tree (Connext's lib/<target> folders, empty), and
the options the wrapper adds are read from a stand-in perftest_cpp that prints its argv.
The argv it would give real Perftest must pass Perftest 4.3's rules
(experiments/agent_options.py). No root.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from experiments import agent_options as ao
from experiments import agents
from mcastlab import paths

RTI = paths.REPO_ROOT / "perftest-wrappers" / "rti"
RUN, BUILD, ENV = RTI / "run_perftest.sh", RTI / "build_perftest.sh", RTI / "rti_env.sh"
TARGET = {"x86_64": "x64Linux4gcc7.3.0", "aarch64": "armv8Linux4gcc7.3.0"}.get(os.uname().machine)


def _env(**over: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("NDDSHOME", "RTI_LICENSE_FILE", "PERFTEST_HOME", "PERFTEST_BIN",
                        "PERFTEST_QOS_FILE", "RTI_PLATFORM")}
    return {**env, **over}


def _run(script: Path, args: list[str], env: dict[str, str], cwd: Path
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(script), *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=30)


@pytest.fixture
def fake_rti(tmp_path: Path) -> dict[str, str]:
    """NDDSHOME with Connext's lib/ layout and a license; PERFTEST_HOME with a built tree
    whose perftest_cpp prints its argv, one per line, then LD_LIBRARY_PATH."""
    if TARGET is None:
        pytest.skip("no Connext target name known for this CPU")
    home = tmp_path / "rti_connext_dds-7.3.0"
    for d in ("java", "x64Linux3gcc4.8.2", "x64Linux4gcc7.3.0", "armv8Linux4gcc7.3.0",
              "x64Darwin17clang9.0"):
        (home / "lib" / d).mkdir(parents=True)
    (home / "rti_license.dat").write_text("<expiration_date>2999-01-01</expiration_date>\n")
    ph = tmp_path / "rtiperftest"
    exe = ph / "bin" / TARGET / "release" / "perftest_cpp"
    exe.parent.mkdir(parents=True)
    exe.write_text('#!/bin/sh\nfor a in "$@"; do echo "$a"; done\n'
                   'echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"\n')
    exe.chmod(0o755)
    (ph / "perftest_qos_profiles.xml").write_text("<dds/>\n")
    return {"NDDSHOME": str(home), "PERFTEST_HOME": str(ph)}


def test_scripts_are_shellcheck_clean() -> None:
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck is not installed (apt-get install shellcheck)")
    p = subprocess.run(["shellcheck", "-x", str(RUN), str(BUILD), str(ENV)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout


@pytest.mark.parametrize("script", [RUN, BUILD], ids=lambda p: p.name)
def test_without_nddshome_stops_at_once_saying_so(script: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    fake = tmp_path / "perftest_cpp"
    fake.write_text(f"#!/bin/sh\ntouch {marker}\n")
    fake.chmod(0o755)
    p = _run(script, ["-sub"], _env(PERFTEST_BIN=str(fake)), tmp_path)
    assert p.returncode == 3
    assert p.stdout == "" and len(p.stderr.splitlines()) == 1
    assert "NDDSHOME is not set" in p.stderr and "install RTI Connext DDS" in p.stderr
    assert not marker.exists() and not (tmp_path / ".deps").exists()


def test_without_license_or_with_an_expired_one_stops(fake_rti: dict[str, str],
                                                      tmp_path: Path) -> None:
    lic = Path(fake_rti["NDDSHOME"]) / "rti_license.dat"
    lic.unlink()
    p = _run(RUN, ["-sub"], _env(**fake_rti), tmp_path)
    assert p.returncode == 3 and "no RTI license found" in p.stderr
    lic.write_text("<expiration_date>2001-01-01</expiration_date>\n")
    p = _run(RUN, ["-sub"], _env(**fake_rti), tmp_path)
    assert p.returncode == 3 and "expired on 2001-01-01" in p.stderr


def test_platform_is_this_machines_newest_linux_target(fake_rti: dict[str, str]) -> None:
    def platform(**env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-c", f'. "{ENV}"; rti_platform "$NDDSHOME"'],
                              env=_env(**fake_rti, **env), capture_output=True, text=True,
                              timeout=30)
    assert platform().stdout.strip() == TARGET
    assert platform(RTI_PLATFORM="x64Linux3gcc4.8.2").stdout.strip() == "x64Linux3gcc4.8.2"
    assert platform(RTI_PLATFORM="nonesuch").returncode != 0
    for d in Path(fake_rti["NDDSHOME"], "lib").glob("*Linux*"):
        d.rmdir()
    assert platform().returncode != 0


def _final_argv(out: str) -> tuple[list[str], str]:
    lines = out.splitlines()
    return lines[:-1], lines[-1]


def _runner_lines(tmp_path: Path) -> list[tuple[str, list[str]]]:
    """rti command lines the runner builds: a 3x3 throughput test (unicast peers) and a
    1x1 latency test."""
    base = {"agent": "rti", "mode": "unicast", "reliable": True, "data_len": 100,
            "domain": 0, "latency_count": 1000, "execution_time": 10, "num_iter": None,
            "test": "throughput", "agent_extra_args": [], "discovery": "unicast-peers",
            "publishers": 3, "subscribers": 3,
            "placement": {"pub0": "h1", "pub1": "h2", "pub2": "h1", "sub0": "h2",
                          "sub1": "h1", "sub2": "h2"}}
    lat = {**base, "test": "latency", "latency_count": 1, "publishers": 1, "subscribers": 1,
           "discovery": "spdp-multicast", "placement": {"pub0": "h1", "sub0": "h2"}}
    ips = {"h1": "10.0.0.1", "h2": "10.0.0.2"}
    return [(f"{c['test']}-{s.name}", s.argv[1:])
            for c in (base, lat) for s in agents.build(c, ips, tmp_path)]


def test_runner_lines_through_the_wrapper_pass_perftest_rules(
        fake_rti: dict[str, str], tmp_path: Path) -> None:
    qos = str(Path(fake_rti["PERFTEST_HOME"]) / "perftest_qos_profiles.xml")
    for name, args in _runner_lines(tmp_path):
        p = _run(RUN, args, _env(**fake_rti), tmp_path)
        assert p.returncode == 0, p.stderr
        argv, ld = _final_argv(p.stdout)
        assert ao.perftest_errors(argv) == [], (name, argv)
        assert argv[:len(args)] == args  # the caller's options unchanged, in order
        added = argv[len(args):]
        assert added[:2] == ["-qosFile", qos]  # the runner's -transport UDPv4 is the caller's
        if name.split("-")[1].startswith("pub"):
            assert added[2:] == ["-batchSize", "0"], name
        else:
            assert added[2:] == [], name  # -batchSize is publisher-only
        assert ld.startswith(f"LD_LIBRARY_PATH={fake_rti['NDDSHOME']}/lib/{TARGET}")
        assert "config: transport UDPv4\n" in p.stderr


def test_wrapper_respects_the_callers_choices(fake_rti: dict[str, str],
                                             tmp_path: Path) -> None:
    env = _env(**fake_rti)
    p = _run(RUN, ["-PUB", "-batch", "8192", "-qosF", "/x.xml", "-transport", "UDPv4"], env,
             tmp_path)
    argv, _ = _final_argv(p.stdout)
    assert argv == ["-PUB", "-batch", "8192", "-qosF", "/x.xml", "-transport", "UDPv4"]
    # The transport follows the caller; none is Perftest's default, said aloud.
    p = _run(RUN, ["-sub", "-transport", "SHMEM"], env, tmp_path)
    assert _final_argv(p.stdout)[0] == ["-sub", "-transport", "SHMEM", "-qosFile",
                                        str(Path(fake_rti["PERFTEST_HOME"]) /
                                            "perftest_qos_profiles.xml")]
    assert "config: transport SHMEM\n" in p.stderr
    p = _run(RUN, ["-sub"], env, tmp_path)
    assert "-transport" not in _final_argv(p.stdout)[0]
    assert "config: transport UDPv4|SHMEM (Perftest's default)" in p.stderr
    p = _run(RUN, ["-sub", "-transport", "TCP"], env, tmp_path)
    assert p.returncode == 3 and "-transport TCP refused: allowed UDPv4, SHMEM" in p.stderr
    assert p.stdout == ""
    # -b is -batchSize for Perftest (key order), -bestEffort is not.
    argv, _ = _final_argv(_run(RUN, ["-pub", "-bestEffort"], env, tmp_path).stdout)
    assert argv[-2:] == ["-batchSize", "0"]


def test_wrapper_prefixes_are_perftests() -> None:
    """The shortest prefixes the wrapper matches are those Perftest's key order gives."""
    calls = re.findall(r'opt_is "\$a" (\S+) (\S+)(?:;| \|\|)', RUN.read_text())
    assert len(calls) == 6
    for shortest, full in calls:
        assert shortest == ao.shortest_prefix(full), full


def test_build_default_tag_is_a_release() -> None:
    text = BUILD.read_text()
    (tag,) = re.findall(r"tag=\$\{1:-([^}]+)\}", text)
    # rticommunity/rtiperftest's 4.x release tags (git tag, read November 2026).
    assert tag in ("4.0", "4.1", "4.1.1", "4.2", "4.3")
    assert '-name "${cpu}Linux*"' in ENV.read_text()  # RTI's x64Linux... folders
