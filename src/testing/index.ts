/** `allocrun/testing`: what tests of allocrun, and of apps embedding it, need to drive runners deterministically. */
export { SimulatedClock, settle } from './simulated-clock.ts';
export { recordingTaskHook, recordingAllocHook, untilAborted, type HookCall } from './hook-recorder.ts';
export { createMockDriver, MockStartError } from '../drivers/mock/mock-driver.ts';
export { parseMockConfig, MockConfigError, type MockTaskConfig } from '../drivers/mock/mock-config.ts';
export { StubController, type StubControllerOptions, type StubControllerMethods } from './stub-controller.ts';
export { capturingDriver, type CapturingDriver } from './capturing-driver.ts';
export { replayRecording, ReplayInputError, type ReplayOptions, type ReplayResult, type ReplayDivergence, type ReplayMachines, type ReplayStep } from '../runtime/replay-driver.ts';
