/** `allocrun`: the public surface (shared/CONTRACT.md). */
export { createTaskRunner, type TaskRunner, type TaskRunnerOptions } from './runtime/create-task-runner.ts';
export { createAllocRunner, type AllocRunner, type AllocRunnerOptions, type PersistedAllocRunner } from './runtime/create-alloc-runner.ts';
export type { AllocRunnerEvent, AllocCommandRejection, AllocRunnerActor } from '../machines/alloc-runner.ts';
export type { RunnerRejection } from './runtime/create-alloc-runner.ts';
export { AllocStatsReporter, type AllocResourceUsage } from './runtime/alloc-stats.ts';
export type { TaskRunnerEvent, CommandRejection, TaskRunnerActor } from '../machines/task-runner.ts';
export { TaskEventType } from '../machines/task-events.ts';
export { HookError } from './hooks/types.ts';
export type {
  TaskHook, AllocRunnerHook, HookEnv, TaskPrestartRequest, TaskPrestartResponse, TaskPoststartRequest,
  TaskExitedRequest, TaskUpdateRequest, TaskStopRequest,
} from './hooks/types.ts';
export type {
  Controller, Driver, DriverContext, DriverHandle, ShutdownOptions, ResourceUsage, LogLine, LogOptions,
  ContainerStatus, PortStatus,
} from './drivers/controller.ts';
export { realClock, type Clock } from './drivers/clock.ts';
export { createMockDriver } from './drivers/mock/mock-driver.ts';
// SwarmKit's exec layer: errors with behaviour, Do/Resolve, the task manager.
export {
  ExecError, ErrTaskPrepared, ErrTaskStarted, ErrTaskRetry, ErrTaskNoop, ErrTaskUpdateRejected, ErrControllerClosed,
  ErrRuntimeUnsupported, ErrDependencyNotReady, ErrClosed, ErrInvalidTransition, TemporaryError, ExitError,
  ContainerStatusError, makeTemporary, isTemporary, isExitCoder, isContainerStatuser, isPortStatuser, isCancellation,
  errorIs, causeChain, messageOf,
} from './drivers/errors.ts';
export type { ExecErrorCode, Temporary, ExitCoder, ContainerStatuser, PortStatuser, ExitErrorInit } from './drivers/errors.ts';
export { logPublisherFunc, isControllerLogs, publishLogs, createSecretsManager, createConfigsManager } from './drivers/executor.ts';
export type {
  Executor, NodeDescription, EncryptionKey, LogMessage, LogPublisher, LogPublisherProvider, ControllerLogs, Secret,
  Config, SecretGetter, SecretsManager, ConfigGetter, ConfigsManager, VolumeGetter, SecretsProvider, ConfigsProvider,
  DependencyGetter,
} from './drivers/executor.ts';
export { SwarmTaskState, swarmTaskStateName, newSwarmTaskStatus } from './drivers/task-status.ts';
export type { SwarmTaskStatus, SwarmTask, SwarmTaskMeta } from './drivers/task-status.ts';
export { Do, Resolve, transitionStatus, statusesEqualStable, type DoOptions, type DoResult, type ResolveResult } from './drivers/do.ts';
export { createTaskManager, bindTaskManager, type TaskManager, type TaskManagerOptions } from './runtime/create-task-manager.ts';
export { createExecutor, type ExecutorOptions, type LocalExecutor } from './runtime/create-executor.ts';
// Real processes and the task environment.
export { createRawExecDriver, RAW_EXEC, allocLogDir, type RawExecDriver, type RawExecDriverOptions } from './drivers/raw-exec/raw-exec-driver.ts';
export { buildTaskEnv, type TaskEnv, type TaskEnvInput } from './env/task-env.ts';
export { localNodeInfo, type NodeInfo } from './env/node-info.ts';
export { hostEnvFor, DEFAULT_ENV_DENYLIST } from './env/host-env.ts';
export { createAgent, DuplicateAllocError, type Agent, type AgentOptions, type AgentRecord, type SavedState } from './runtime/create-agent.ts';
export { GC_DEFAULTS, type AgentGc, type DiskUsage, type GcOptions } from './runtime/alloc-gc.ts';
// Job files and specs.
export * from './jobspec/index.ts';
// Inspection and the visualizer.
export { createInspectionStream, type InspectionStream, type InspectionStreamOptions } from './inspect/inspection-stream.ts';
export { recordInspection, type Recording, type RecordOptions } from './inspect/record.ts';
export { serveInspector, type InspectorServer, type InspectorServerOptions, type InspectorControl, type InspectorLogs, type InspectorLogLine } from './inspect/server.ts';
export { serveReplay, type ReplayServer, type ReplayServerOptions } from './inspect/replay.ts';
// A recording's replay lines (`allocrun replay --check`); replayRecording itself is in allocrun/testing.
export { REPLAY_FORMAT_VERSION, type ReplayLine, type ReplayRootLine, type ReplayInputLine, type ReplayStepLine, type DivergenceLine } from './inspect/replay-format.ts';
export { allocRunnerControl, allocRunnerLogs, type ControllableAllocRunner } from './inspect/control.ts';
export { createStatelyFeed, type StatelyFeed, type StatelyInspectionEvent } from './inspect/stately.ts';
export { machineDefinitionOf } from './inspect/definition.ts';
export type * from './inspect/protocol.ts';
// A reader of the stream (not the page) folds transitions with these: `copy` patches read another actor's context (protocol 7).
export { applyContextPatch, statusOf } from './inspect/protocol.ts';
// State.
export { FileStateStore } from './state/file-store.ts';
export { StateStoreError, type StateStore, type AllocRecord } from './state/store.ts';
// Nomad Variables: the agent's store of them, and what a task's templates may read.
export { VariableStore, variablesOf, VariableStoreError, type Indexer, type Conflict, type Written, type Deleted } from './variables/variable-store.ts';
export type { VariableSource, VariableChange } from './variables/variable-source.ts';
export type { Variable, VariableMetadata, VariableItems } from './variables/variable.ts';
export { VariableError, pathProblem } from './variables/path-rules.ts';
export { implicitPaths, taskMayRead, type TaskClaim } from './variables/job-access.ts';
// Nomad-native services: the catalog the services hooks register in, and its read side.
export {
  ServiceRegistry,
  makeAllocServiceId,
  workloadName,
  registrationsOf,
  type ServiceCatalog,
  type ServiceChange,
  type ServiceChanges,
  type ServiceNamespaceList,
  type ServiceRegistration,
  type ServiceRegistrationInput,
  type IndexSource,
} from './services/index.ts';
// Nomad service checks: the agent's shared scheduler and result store, and the results' shape.
export { CheckScheduler } from './checks/scheduler.ts';
export { CheckStore } from './checks/check-store.ts';
export type { CheckQueryResult, AllocationResults, CheckStatus, CheckMode } from './checks/result.ts';
