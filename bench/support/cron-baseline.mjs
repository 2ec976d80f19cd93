// The baseline of bench/cron: a bare node process with N croner `Cron` jobs (croner keeps one setTimeout
// per job), with croner's default options (the process's local time zone). argv: <jobs> <expression>.
// Each job's callback only notes when it started (cron-samples.mjs; its slot is the second it started in:
// croner fires a slot once its time has come, and the bench's expression fires every second, so this
// holds while the skew stays under a second). Prints {"ready":true} once the jobs are scheduled.
// IPC: `count`, `samples` (cron-samples.mjs), `timers` (timer-census.mjs), `mem`, `cpu` (proc.mjs).
import { Cron } from 'croner';
import { createSlotRecorder } from './cron-samples.mjs';
import { serveChild } from './proc.mjs';
import { timerCensus } from './timer-census.mjs';

const [jobsArg, expression] = process.argv.slice(2);
const recorder = createSlotRecorder();
const callback = () => {
  const startedAt = Date.now();
  recorder.record(startedAt - (startedAt % 1000), startedAt);
};

const jobs = [];
for (let i = 0; i < Number(jobsArg); i++) jobs.push(new Cron(expression, callback));

serveChild(
  async () => {
    for (const job of jobs) job.stop();
  },
  { ...recorder.handlers, timers: async () => ({ timers: await timerCensus() }) },
);
process.stdout.write(`${JSON.stringify({ ready: true, pid: process.pid })}\n`);
