// CPU time of the processes answering a benchmark's queries, from /proc (Linux): named's own, or
// this process's (the embedded responder runs in it) with its UDP helper processes. Only one target
// answers at a time, so the idle ones add nothing to a run's difference.
import { readdirSync, readFileSync } from "node:fs";

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** User + system CPU of process `pid` in ms, all its threads; 0 when it is gone. */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${String(pid)}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // After the command: state(0) ppid(1) … utime(11) stime(12).
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** This process and every child of it running the responder's UDP helper script. */
export function responderCpuMs(): number {
  let total = processCpuMs(process.pid);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === process.pid && readFileSync(`/proc/${entry}/cmdline`, "utf8").includes("udp-process.js"))
        total += processCpuMs(Number(entry));
    } catch {
      // Gone while read.
    }
  }
  return total;
}
