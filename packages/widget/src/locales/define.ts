/** A locale chunk hands its table to the first script, which asked for it. */
import { register } from '../kit.js'
import type { Strings } from '../strings.js'

export const define = (tag: string, table: Strings): void => register(`locale-${tag}`, table)
