/** The sandbox world's fixed facts: its start, its named wallets and contracts' names, empty roots. */
/** 2024-02-01T00:00:00Z */
export const START_TIMESTAMP = 1_706_745_600;
/** Every chain spans at least this many days of blocks (more when the data set is large). */
export const MIN_SPAN_DAYS = 4;
export const NAMES = ['alice.eth', 'bob.eth', 'carol.eth', 'deployer.eth', 'dave.eth', 'erin.eth', 'frank.eth', 'grace.eth'];
export const NAMED_WALLET_IDS = [0, 1, 2, 3, 4, 5, 6, 7];
export const DEPLOYER = 3;
export const ERC20_NAMES: [string, string][] = [
  ['Sandbox USD', 'SUSD'],
  ['Wrapped Sand', 'WSAND'],
  ['Block Token', 'BLK'],
];
export const ADJ = ['Pixel', 'Crypto', 'Bored', 'Lazy', 'Cosmic', 'Tiny', 'Golden', 'Neon', 'Quantum', 'Wild'];
export const NOUN = [
  'Punks',
  'Apes',
  'Lions',
  'Birds',
  'Cats',
  'Robots',
  'Ghosts',
  'Frogs',
  'Knights',
  'Whales',
  'Dragons',
  'Owls',
  'Foxes',
];
export const ERC1155_GENESIS_AMOUNT = 1000n;
export const ERC1155_ID_SPACE = 20;
export const ZERO_BLOOM = '0x' + '0'.repeat(512);
export const EMPTY_TRIE_ROOT = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421';
export const EMPTY_UNCLES = '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347';
