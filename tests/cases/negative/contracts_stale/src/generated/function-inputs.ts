// This file is stale on purpose: it predates every declaration.
export type DatabaseFunctionInputMap = { removedFunction: { oldParam: string } };
