// The in-process V8 CPU profiler around a scenario's measured loop (not its loading), written as a
// .cpuprofile that Chrome DevTools or `node --cpu-prof`'s readers open.
import { writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";
import { progress } from "./stats.js";

/** Starts sampling every 200 µs; hand the session to stopProfile. */
export async function startProfile(): Promise<Session> {
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 200 });
  await session.post("Profiler.start");
  return session;
}

/** Stops the profiler and writes its profile to `file`. */
export async function stopProfile(session: Session, file: string): Promise<void> {
  const { profile } = await session.post("Profiler.stop");
  await writeFile(file, JSON.stringify(profile));
  session.disconnect();
  progress(`CPU profile written to ${file}`);
}
