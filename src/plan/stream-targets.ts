import type { TargetKind, StreamTarget, StreamTargetOf } from '../datasets/index.js';
import type { Target } from '../job/schema.js';

/** A unit target of a job target, with the `targets` part of its unit keys and its place among the target's events. */
export interface KeyedStreamTarget {
  target: StreamTarget;
  /** Lowercase address, name, `address_topic0` for an event, `chain` for a chain target. */
  key: string;
  eventIndex: number;
}

type Expand = { [K in TargetKind]: (t: Extract<Target, { kind: K }>) => (KeyedStreamTarget & { target: StreamTargetOf<K> })[] };

/** What each kind of job target stands for: one wallet, each event of a contract, the chains themselves. */
const EXPAND: Expand = {
  wallet: (t) => {
    const at = `targets[${t.index}]`;
    const target = { kind: 'wallet', wallet: t.wallet, isName: t.isName, targetIndex: t.index, nft_types: t.nft_types } as const;
    return [{ target: { ...target, at, defaultTableAt: `${at}.datasets`, tables: t.tables }, key: t.wallet, eventIndex: 0 }];
  },
  contract: (t) =>
    t.events.map((event, eventIndex) => {
      const at = `targets[${t.index}].events[${eventIndex}]`;
      return {
        target: {
          kind: 'contract',
          contract: t.contract,
          event,
          targetIndex: t.index,
          eventIndex,
          abi: t.abi,
          at,
          defaultTableAt: at,
          tables: event.tables,
        },
        key: `${t.contract}_${event.topic0}`,
        eventIndex,
      };
    }),
  chain: (t) => {
    const at = `targets[${t.index}]`;
    return [
      {
        target: { kind: 'chain', targetIndex: t.index, at, defaultTableAt: `${at}.datasets`, tables: t.tables },
        key: 'chain',
        eventIndex: 0,
      },
    ];
  },
};

/** The unit targets of a job target. */
export function unitTargets(t: Target): KeyedStreamTarget[] {
  return (EXPAND[t.kind] as (t: Target) => KeyedStreamTarget[])(t);
}
