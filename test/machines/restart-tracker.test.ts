import { describe, expect, it } from 'vitest';
import {
  decideRestart,
  isCleanExit,
  mulberry32,
  newRestartTracker,
  restartsOnSuccess,
  type RestartDecision,
  type RestartDecisionKind,
  type RestartTrackerState,
  type RestartTrigger,
} from '../../machines/restart-tracker.ts';
import { defaultRestartPolicy, type JobType, type RestartPolicy, type TaskLifecycle } from '../../machines/model.ts';

const SEC = 1_000;
const MIN = 60 * SEC;

const exit = (exitCode: number, signal = 0, err?: string): RestartTrigger => ({
  kind: 'exit',
  exit: err === undefined ? { exitCode, signal } : { exitCode, signal, err },
});
const failedExit = exit(127);
const cleanExit = exit(0);
const startError = (recoverable: boolean): RestartTrigger => ({ kind: 'startError', recoverable, message: 'boom' });
const manual: RestartTrigger = { kind: 'restartRequested', failure: false };
const failureRestart: RestartTrigger = { kind: 'restartRequested', failure: true };
const killed: RestartTrigger = { kind: 'killed' };
const noFlag: RestartTrigger = { kind: 'none' };

/** Nomad's testPolicy: 3 attempts in 2m, 1s apart. */
const testPolicy = (mode: RestartPolicy['mode'], extra: Partial<RestartPolicy> = {}): RestartPolicy => ({
  attempts: 3,
  interval: 2 * MIN,
  delay: 1 * SEC,
  mode,
  ...extra,
});

interface Args {
  policy?: RestartPolicy;
  jobType?: JobType;
  lifecycle?: TaskLifecycle;
  tracker?: RestartTrackerState;
  trigger: RestartTrigger;
  now?: number;
  random?: () => number;
}

function decide(a: Args): RestartDecision {
  return decideRestart({
    policy: a.policy ?? testPolicy('fail'),
    jobType: a.jobType ?? 'service',
    lifecycle: a.lifecycle,
    tracker: a.tracker ?? newRestartTracker(0),
    trigger: a.trigger,
    now: a.now ?? 0,
    random: a.random ?? (() => 0),
  });
}

/** Feeds triggers through one tracker, as a task runner does, `step` ms apart. */
function run(triggers: RestartTrigger[], base: Omit<Args, 'trigger' | 'tracker' | 'now'>, step = SEC): RestartDecision[] {
  let tracker = newRestartTracker(0);
  return triggers.map((trigger, i) => {
    const d = decide({ ...base, tracker, trigger, now: (i + 1) * step });
    tracker = d.tracker;
    return d;
  });
}

const inJitter = (delay: number, base: number) => delay >= base && delay < base * 1.25;

describe('restart tracker: the decision order of spec §1.4', () => {
  interface Row {
    name: string;
    args: Args;
    decision: RestartDecisionKind;
    delay?: number;
    reason?: string;
    tracker?: RestartTrackerState;
  }
  const tracker = { count: 2, windowStart: 0 };
  const rows: Row[] = [
    // Step 1
    { name: 'step 1: a killed task is not restarted and the kill is not counted', args: { trigger: killed, tracker }, decision: 'killed', delay: 0, reason: '', tracker },
    { name: 'step 1: a kill wins even when the policy allows no restarts', args: { trigger: killed, policy: testPolicy('fail', { attempts: 0 }) }, decision: 'killed' },
    // Step 2
    { name: 'step 2: a manual restart restarts at once without counting', args: { trigger: manual, tracker }, decision: 'restart', delay: 0, reason: '', tracker },
    { name: 'step 2: a manual restart ignores a policy that allows no restarts', args: { trigger: manual, policy: testPolicy('fail', { attempts: 0 }) }, decision: 'restart', delay: 0 },
    { name: 'step 2: a manual restart ignores an exhausted window', args: { trigger: manual, tracker: { count: 9, windowStart: 0 } }, decision: 'restart', delay: 0 },
    // Step 3
    { name: 'step 3: with zero attempts a service that exits 0 is not restarted and fails', args: { trigger: cleanExit, policy: testPolicy('fail', { attempts: 0 }) }, decision: 'notRestarting', reason: 'Policy allows no restarts' },
    { name: 'step 3: with zero attempts a batch task that exits 0 terminates', args: { trigger: cleanExit, jobType: 'batch', policy: testPolicy('fail', { attempts: 0 }) }, decision: 'terminated', reason: 'Policy allows no restarts' },
    { name: 'step 3: with zero attempts a recoverable start error is not retried', args: { trigger: startError(true), policy: testPolicy('fail', { attempts: 0 }) }, decision: 'notRestarting', reason: 'Policy allows no restarts' },
    { name: 'step 3: with zero attempts a failure restart is refused', args: { trigger: failureRestart, policy: testPolicy('delay', { attempts: 0 }) }, decision: 'notRestarting', reason: 'Policy allows no restarts' },
    { name: 'step 3: with zero attempts the tracker is left untouched', args: { trigger: failedExit, tracker, now: 10 * MIN, policy: testPolicy('fail', { attempts: 0 }) }, decision: 'notRestarting', tracker },
    // Step 4
    { name: 'step 4: a failure inside the window is counted', args: { trigger: failedExit, tracker: { count: 1, windowStart: 0 }, now: 30 * SEC }, decision: 'restart', tracker: { count: 2, windowStart: 0 } },
    { name: 'step 4: a failure after the window resets the count and starts a new window', args: { trigger: failedExit, tracker: { count: 3, windowStart: 0 }, now: 2 * MIN + 1 }, decision: 'restart', reason: 'Restart within policy', tracker: { count: 1, windowStart: 2 * MIN + 1 } },
    { name: 'step 4: a failure exactly at the window end still counts in the old window', args: { trigger: failedExit, tracker: { count: 3, windowStart: 0 }, now: 2 * MIN }, decision: 'notRestarting', tracker: { count: 4, windowStart: 0 } },
    // Step 5
    { name: 'step 5: with no failure flag there is no decision but the attempt is counted', args: { trigger: noFlag, tracker: { count: 1, windowStart: 0 } }, decision: 'none', delay: 0, tracker: { count: 2, windowStart: 0 } },
    { name: 'step 5: with no failure flag an exhausted window still gives no decision', args: { trigger: noFlag, tracker: { count: 3, windowStart: 0 } }, decision: 'none' },
    // Step 6
    { name: 'step 6: an unrecoverable start error is not retried even on the first attempt', args: { trigger: startError(false) }, decision: 'notRestarting', reason: 'Error was unrecoverable', tracker: { count: 1, windowStart: 0 } },
    { name: 'step 6: a batch task that exits 0 terminates without failing', args: { trigger: cleanExit, jobType: 'batch' }, decision: 'terminated', reason: 'Restart unnecessary as task terminated successfully' },
    { name: 'step 6: a sysbatch task that exits 0 terminates even over the limit', args: { trigger: cleanExit, jobType: 'sysbatch', tracker: { count: 5, windowStart: 0 } }, decision: 'terminated' },
    { name: 'step 6: a poststop task that exits 0 terminates in a service job', args: { trigger: cleanExit, lifecycle: { hook: 'poststop' } }, decision: 'terminated' },
    { name: 'step 6: a service task that exits 0 is restarted', args: { trigger: cleanExit }, decision: 'restart', reason: 'Restart within policy' },
    { name: 'step 6: a batch task killed by a signal is a failure', args: { trigger: exit(0, 9), jobType: 'batch' }, decision: 'restart' },
    { name: 'step 6: a batch task whose driver reported an error is a failure', args: { trigger: exit(0, 0, 'lost'), jobType: 'batch' }, decision: 'restart' },
    // Step 7
    { name: 'step 7: in mode fail the attempt past the limit is not restarted', args: { trigger: failedExit, tracker: { count: 3, windowStart: 0 } }, decision: 'notRestarting', delay: 0, reason: 'Exceeded allowed attempts 3 in interval 2m0s and mode is "fail"' },
    { name: 'step 7: in mode delay the attempt past the limit waits out the rest of the window', args: { trigger: failedExit, policy: testPolicy('delay'), tracker: { count: 3, windowStart: 0 }, now: 20 * SEC }, decision: 'restart', delay: 100 * SEC + 1, reason: 'Exceeded allowed attempts, applying a delay' },
    // Found by the property tests: a wait ending exactly at the window's end restarted into the same window, failed
    // and waited 0 ms again, forever at one instant of a simulated clock. It ends 1 ms past, in a new interval.
    { name: 'step 7: at the very end of the window, mode delay waits 1 ms so the next attempt is in a new interval', args: { trigger: failedExit, policy: testPolicy('delay'), tracker: { count: 3, windowStart: 0 }, now: 120 * SEC }, decision: 'restart', delay: 1 },
    { name: 'step 7: a failure restart counts against the limit', args: { trigger: failureRestart, tracker: { count: 3, windowStart: 0 } }, decision: 'notRestarting' },
    { name: 'step 7: the fail reason prints the interval as a Go duration', args: { trigger: failedExit, policy: { attempts: 2, interval: 30 * MIN, delay: 15 * SEC, mode: 'fail' }, tracker: { count: 2, windowStart: 0 } }, decision: 'notRestarting', reason: 'Exceeded allowed attempts 2 in interval 30m0s and mode is "fail"' },
    // Step 8
    { name: 'step 8: a failure within policy restarts after the delay', args: { trigger: failedExit }, decision: 'restart', delay: 1 * SEC, reason: 'Restart within policy', tracker: { count: 1, windowStart: 0 } },
    { name: 'step 8: a recoverable start error within policy restarts after the delay', args: { trigger: startError(true) }, decision: 'restart', delay: 1 * SEC },
    { name: 'step 8: the last allowed attempt still restarts', args: { trigger: failedExit, tracker: { count: 2, windowStart: 0 } }, decision: 'restart', tracker: { count: 3, windowStart: 0 } },
  ];

  for (const row of rows) {
    it(row.name, () => {
      const d = decide(row.args);
      expect(d.decision).toBe(row.decision);
      if (row.delay !== undefined) expect(d.delay).toBe(row.delay);
      if (row.reason !== undefined) expect(d.reason).toBe(row.reason);
      if (row.tracker !== undefined) expect(d.tracker).toEqual(row.tracker);
    });
  }

  it('never mutates the tracker it is given', () => {
    const tracker = Object.freeze({ count: 1, windowStart: 0 });
    expect(() => decide({ trigger: failedExit, tracker, now: 5 * MIN })).not.toThrow();
    expect(tracker).toEqual({ count: 1, windowStart: 0 });
  });
});

describe('restart tracker: jitter', () => {
  const rows: { name: string; delay: number; random: number; expected: number }[] = [
    { name: 'adds no jitter when the random source returns 0', delay: 15 * SEC, random: 0, expected: 15 * SEC },
    { name: 'stays under 1.25 times the delay when the random source returns 0.999', delay: 15 * SEC, random: 0.999, expected: 15 * SEC + 0.999 * 0.25 * 15 * SEC },
    { name: 'treats a zero delay as one nanosecond', delay: 0, random: 0, expected: 1e-6 },
    { name: 'keeps a zero delay under 1.25 nanoseconds with the largest random value', delay: 0, random: 0.999, expected: 1e-6 + 0.999 * 0.25 * 1e-6 },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const d = decide({ trigger: failedExit, policy: testPolicy('fail', { delay: row.delay }), random: () => row.random });
      expect(d.delay).toBeCloseTo(row.expected, 12);
      expect(inJitter(d.delay, Math.max(row.delay, 1e-6))).toBe(true);
    });
  }

  it('draws from the random source only for a within-policy restart', () => {
    let draws = 0;
    const random = () => (draws++, 0.5);
    const triggers: RestartTrigger[] = [killed, manual, startError(false), cleanExit, noFlag];
    for (const trigger of triggers) decide({ trigger, jobType: 'batch', random });
    decide({ trigger: failedExit, policy: testPolicy('delay'), tracker: { count: 3, windowStart: 0 }, random });
    expect(draws).toBe(0);
    decide({ trigger: failedExit, random });
    expect(draws).toBe(1);
  });
});

describe('restart tracker: Nomad scenarios (restarts_test.go)', () => {
  it('TestClient_RestartTracker_ModeDelay: restarts three times within jitter, then waits out the window', () => {
    const random = mulberry32(42);
    const ds = run([failedExit, failedExit, failedExit, failedExit, failedExit, failedExit], {
      policy: testPolicy('delay'),
      random: () => random.next(),
    });
    for (const d of ds.slice(0, 3)) {
      expect(d.decision).toBe('restart');
      expect(inJitter(d.delay, 1 * SEC)).toBe(true);
    }
    for (const d of ds.slice(3)) {
      expect(d.decision).toBe('restart');
      expect(d.reason).toBe('Exceeded allowed attempts, applying a delay');
      expect(d.delay).toBeGreaterThan(1 * SEC);
      expect(d.delay).toBeLessThanOrEqual(2 * MIN);
    }
  });

  it('TestClient_RestartTracker_ModeFail: a system job restarts three times, then stops restarting', () => {
    const ds = run([failedExit, failedExit, failedExit, failedExit], { policy: testPolicy('fail'), jobType: 'system' });
    expect(ds.map((d) => d.decision)).toEqual(['restart', 'restart', 'restart', 'notRestarting']);
    expect(ds[3]!.reason).toBe('Exceeded allowed attempts 3 in interval 2m0s and mode is "fail"');
  });

  const zero = testPolicy('fail', { attempts: 0 });
  const zeroRows: { name: string; jobType: JobType; trigger: RestartTrigger; decision: RestartDecisionKind }[] = [
    { name: 'TestClient_RestartTracker_ZeroAttempts: a service exiting 1 is not restarted', jobType: 'service', trigger: exit(1), decision: 'notRestarting' },
    { name: 'TestClient_RestartTracker_ZeroAttempts: a service exiting 0 is not restarted', jobType: 'service', trigger: exit(0), decision: 'notRestarting' },
    { name: 'TestClient_RestartTracker_ZeroAttempts: a batch task exiting 0 terminates', jobType: 'batch', trigger: exit(0), decision: 'terminated' },
    { name: 'TestClient_RestartTracker_ZeroAttempts: a batch task exiting 1 is not restarted', jobType: 'batch', trigger: exit(1), decision: 'notRestarting' },
  ];
  for (const row of zeroRows) {
    it(row.name, () => {
      expect(decide({ policy: zero, jobType: row.jobType, trigger: row.trigger }).decision).toBe(row.decision);
    });
  }

  it('TestClient_RestartTracker_TaskKilled: a killed task is reported killed with no delay', () => {
    const d = decide({ policy: zero, trigger: killed });
    expect([d.decision, d.delay]).toEqual(['killed', 0]);
  });

  it('TestClient_RestartTracker_RestartTriggered: a manual restart under zero attempts restarts after 0', () => {
    const d = decide({ policy: zero, trigger: manual });
    expect([d.decision, d.delay]).toEqual(['restart', 0]);
  });

  it('TestClient_RestartTracker_StartError_Recoverable_Fail: three restarts, then not restarting', () => {
    const ds = run([startError(true), startError(true), startError(true), startError(true)], { policy: testPolicy('fail') });
    expect(ds.map((d) => d.decision)).toEqual(['restart', 'restart', 'restart', 'notRestarting']);
    for (const d of ds.slice(0, 3)) expect(inJitter(d.delay, 1 * SEC)).toBe(true);
  });

  it('TestClient_RestartTracker_StartError_Recoverable_Delay: three restarts, then a delay in (Delay, Interval]', () => {
    const ds = run([startError(true), startError(true), startError(true), startError(true)], { policy: testPolicy('delay') });
    expect(ds.map((d) => d.decision)).toEqual(['restart', 'restart', 'restart', 'restart']);
    expect(ds[3]!.reason).toBe('Exceeded allowed attempts, applying a delay');
    expect(ds[3]!.delay).toBeGreaterThan(1 * SEC);
    expect(ds[3]!.delay).toBeLessThanOrEqual(2 * MIN);
  });
});

describe('restart tracker: onSuccess', () => {
  const lifecycles: { label: string; lifecycle?: TaskLifecycle; forService: boolean; forBatch: boolean }[] = [
    { label: 'a main task', lifecycle: undefined, forService: true, forBatch: false },
    { label: 'an ephemeral prestart task', lifecycle: { hook: 'prestart' }, forService: false, forBatch: false },
    { label: 'a prestart sidecar', lifecycle: { hook: 'prestart', sidecar: true }, forService: true, forBatch: true },
    { label: 'an ephemeral poststart task', lifecycle: { hook: 'poststart', sidecar: false }, forService: false, forBatch: false },
    { label: 'a poststart sidecar', lifecycle: { hook: 'poststart', sidecar: true }, forService: true, forBatch: true },
    { label: 'a poststop task', lifecycle: { hook: 'poststop' }, forService: false, forBatch: false },
    { label: 'a poststop task marked sidecar', lifecycle: { hook: 'poststop', sidecar: true }, forService: false, forBatch: false },
  ];
  const jobTypes: JobType[] = ['service', 'system', 'batch', 'sysbatch'];
  for (const jobType of jobTypes) {
    for (const l of lifecycles) {
      const expected = jobType === 'service' || jobType === 'system' ? l.forService : l.forBatch;
      it(`${expected ? 'restarts' : 'does not restart'} ${l.label} of a ${jobType} job after a clean exit`, () => {
        expect(restartsOnSuccess(jobType, l.lifecycle)).toBe(expected);
      });
    }
  }
});

describe('restart tracker: helpers', () => {
  const policies: { jobType: JobType; policy: RestartPolicy }[] = [
    { jobType: 'service', policy: { attempts: 2, interval: 30 * MIN, delay: 15 * SEC, mode: 'fail' } },
    { jobType: 'system', policy: { attempts: 2, interval: 30 * MIN, delay: 15 * SEC, mode: 'fail' } },
    { jobType: 'batch', policy: { attempts: 3, interval: 24 * 60 * MIN, delay: 15 * SEC, mode: 'fail' } },
    { jobType: 'sysbatch', policy: { attempts: 3, interval: 24 * 60 * MIN, delay: 15 * SEC, mode: 'fail' } },
  ];
  for (const { jobType, policy } of policies) {
    it(`defaults a ${jobType} job to ${policy.attempts} attempts in ${policy.interval / MIN} minutes`, () => {
      expect(defaultRestartPolicy(jobType)).toEqual(policy);
    });
  }

  it('starts a new tracker with no attempts and its window at construction', () => {
    expect(newRestartTracker(1234)).toEqual({ count: 0, windowStart: 1234 });
  });

  const exits = [
    { name: 'counts exit code 0 with no signal and no error as clean', exit: { exitCode: 0, signal: 0 }, clean: true },
    { name: 'counts a non-zero exit code as unclean', exit: { exitCode: 1, signal: 0 }, clean: false },
    { name: 'counts death by signal as unclean', exit: { exitCode: 0, signal: 15 }, clean: false },
    { name: 'counts a driver error as unclean', exit: { exitCode: 0, signal: 0, err: 'plugin exited' }, clean: false },
  ];
  for (const row of exits) {
    it(row.name, () => expect(isCleanExit(row.exit)).toBe(row.clean));
  }
});

describe('mulberry32', () => {
  it('returns values in [0, 1)', () => {
    const r = mulberry32(7);
    for (let i = 0; i < 1000; i++) {
      const v = r.next();
      expect(v >= 0 && v < 1).toBe(true);
    }
  });

  it('gives the same sequence for the same seed', () => {
    const a = mulberry32(99);
    const b = mulberry32(99);
    expect([a.next(), a.next(), a.next()]).toEqual([b.next(), b.next(), b.next()]);
  });

  it('gives different sequences for different seeds', () => {
    expect(mulberry32(1).next()).not.toBe(mulberry32(2).next());
  });

  it('continues the same sequence from its saved seed', () => {
    const whole = mulberry32(5);
    const expected = [whole.next(), whole.next(), whole.next(), whole.next()];
    const first = mulberry32(5);
    const head = [first.next(), first.next()];
    const saved = JSON.parse(JSON.stringify({ seed: first.seed })) as { seed: number };
    const rest = mulberry32(saved.seed);
    expect([...head, rest.next(), rest.next()]).toEqual(expected);
  });

  it('keeps its state as an unsigned 32-bit integer', () => {
    const r = mulberry32(-1);
    r.next();
    expect(Number.isInteger(r.seed) && r.seed >= 0 && r.seed < 2 ** 32).toBe(true);
  });
});
