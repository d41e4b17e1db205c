// Declarations of the basedb page SDK (runtime.js), imported as
// "@lark-base-open/base-database-app-sdk/page", "database-runtime" or "/_basedb/runtime.js".
//
// Params are plain objects by name, as `basedb contracts generate` types them in
// src/generated/function-inputs.ts: pass DatabaseFunctionInputMap[K] or MutationInputMap[K]
// as TParams to have a call checked against the declaration. TData describes the
// top-level `data` of the answer, never an envelope.

/** A refused or failed call: the platform's code, its msg and the LogID to look up. */
export declare class BasedbError extends Error {
  readonly name: "BasedbError";
  /** The envelope's code (800004002, 800004011, …), or -1 when nothing was reached. */
  readonly code: number;
  /** The platform's message (upstream's template: Reason. Parameter … Fix … Retry …). */
  readonly msg: string;
  /** The LogID of the call (`basedb logs LOGID`); "" when there is none. */
  readonly logId: string;
  /** The envelope's data, when the refusal carries one (a media task that failed). */
  readonly data: unknown;
  constructor(code: number, msg: string, logId: string, data?: unknown);
}

export type Env = "prod" | "preview";

export interface PageContext {
  origin: string;
  appToken: string;
  env: Env;
}

/** Named params of a call: an object, never an array. */
export type Params = { readonly [name: string]: unknown };

/** The site's token (its appToken, as /sites/<token>/ names it); "" outside a site page. */
export declare const siteToken: string;

/** The site and environment of the page at `url` (default: the current page). */
export declare function pageContext(url?: string): PageContext;

export interface StartContext {
  siteToken: string;
  env: Env;
}

/** The page's entry: runs `start` once the document is parsed, then posts
 * {type: "base-app:ready", siteToken, env} to the frame that holds the page (or
 * {type: "base-app:error", …, message} when `start` throws, and rejects). */
export declare function startBaseApp<T = void>(
  start?: (context: StartContext) => T | Promise<T>): Promise<T>;

export interface ReadyMessage {
  type: "base-app:ready";
  siteToken: string;
  env: Env;
}

export interface ErrorMessage {
  type: "base-app:error";
  siteToken: string;
  env: Env;
  message: string;
}

/** A Database Function (or FaaS): resolves to the top-level `data`, e.g. {rows: [...]}. */
export declare function invokeDatabaseFunction<TData = unknown, TParams extends object = Params>(
  functionId: string, params?: TParams): Promise<TData>;

export interface MutationResult {
  recordIds: string[];
  affected: number;
  record_not_found: string[];
  ignored_fields: string[];
  precondition_failed?: string[];
  [key: string]: unknown;
}

/** A Mutation: check record_not_found and ignored_fields even when it resolves. */
export declare function invokeMutation<TData = MutationResult, TParams extends object = Params>(
  functionId: string, params?: TParams): Promise<TData>;

/** A FaaS: `input` is what the handler receives; resolves to the handler's `data`. */
export declare function invokeFaaS<TData = unknown, TInput extends object = Params>(
  functionId: string, input?: TInput): Promise<TData>;

export interface AITextResult {
  text: string;
  model: string;
  usage: { [key: string]: unknown };
}

export type AIMediaStatus = "pending" | "running" | "succeeded" | "failed" | "cancelled";

export interface AIMediaTaskStarted {
  taskId: string;
  status: AIMediaStatus;
}

export interface AIMediaTask {
  taskId: string;
  key: string;
  capability: "image" | "video";
  status: AIMediaStatus;
  /** Non-zero when the task failed: an envelope code such as 800004005. */
  errCode: number;
  errMessage: string;
  /** The LogID of the call that started the task (`basedb logs LOGID`). */
  logId: string;
  /** When it succeeded: the media made, each by URL (an https URL or a data: URL). */
  result: { media: Array<{ url: string; type: "image" | "video" }> } | null;
  createdAt: string;
  updatedAt: string;
}

/** An AI Function by key: a text one resolves to {text, model, usage}; a media one
 * (image, video) starts a task and resolves to {taskId, status}. */
export declare function callSiteAIFunction<TData = AITextResult, TInput extends object = Params>(
  key: string, input?: TInput): Promise<TData>;

export type AIStreamChunk =
  | { type: "delta"; delta: string }
  | { type: "done"; text: string; model: string; usage: { [key: string]: unknown } };

export interface StreamOptions {
  signal?: AbortSignal;
}

/** A text AI Function's answer as it is written: delta chunks, then one "done". A
 * refusal or a failure midway throws a BasedbError inside the for-await loop. */
export declare function invokeSiteAIFunctionStream<TInput extends object = Params>(
  key: string, input?: TInput, options?: StreamOptions): AsyncGenerator<AIStreamChunk, void>;

/** Starts a media AI Function (text to image or video). */
export declare function createSiteAIMediaTask<TInput extends object = Params>(
  key: string, input?: TInput): Promise<AIMediaTaskStarted>;

/** A media task as it stands. */
export declare function getSiteAIMediaTask(taskId: string): Promise<AIMediaTask>;

export interface WaitOptions {
  /** Between two polls (default 1000). */
  intervalMs?: number;
  /** How long to wait in all (default 10 minutes). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Called with the task after every poll. */
  onStatus?: (task: AIMediaTask) => void;
}

/** Polls until the task ends: resolves when it succeeded; rejects with a BasedbError
 * carrying errCode and errMessage (the task as `data`) when it failed or was cancelled. */
export declare function waitForSiteAIMediaTask(
  taskId: string, options?: WaitOptions): Promise<AIMediaTask>;

/** createSiteAIMediaTask, then waitForSiteAIMediaTask. */
export declare function runSiteAIMediaTask<TInput extends object = Params>(
  key: string, input?: TInput, options?: WaitOptions): Promise<AIMediaTask>;

/** The signed-in user. */
export declare function currentUser(): Promise<{ userId: string; name: string }>;

/** Ends the page session. */
export declare function signOut(): Promise<{ signedOut: boolean }>;
