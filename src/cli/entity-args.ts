import { Args } from '@oclif/core';
import { KINDS } from '../contracts/entities.js';

/** The arguments naming a configuration entity, shared by the config commands. */
export const kindArg = Args.string({ required: true, options: [...KINDS], description: 'the entity kind' });
export const nameArg = Args.string({ required: true, description: "the entity name: 1-128 of A-Z a-z 0-9 . _ -, starting with a letter or digit" });
