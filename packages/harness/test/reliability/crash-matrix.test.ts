/** The crash matrix (crash-matrix-suite.ts) on JSONL session files. */
import { crashMatrix, jsonlBackend } from "./crash-matrix-suite.js";

crashMatrix(jsonlBackend());
