/** The image and metadata of the sandbox's NFT tokens (the explorer route's token instances). */
import type { ChainState, ContractInfo } from './dataset.js';
import type { NftTokenFacts } from './nft-collections-page.js';
import { hash3 } from './prng.js';

/** A holding's tokens as the explorer lists them: id, amount, image and metadata. */
export function nftTokens(c: ChainState, contract: ContractInfo, tokens: readonly { id: string; amount: string }[]): NftTokenFacts[] {
  return tokens.map((t) => ({
    id: t.id,
    amount: t.amount,
    imageUrl: nftImage(c.chainId, contract.address, t.id),
    metadata: nftMetadata(c, contract, t.id),
  }));
}

const TRAITS = ['Red', 'Blue', 'Green', 'Gold', 'Silver', 'Black'];
const RARITY = ['common', 'uncommon', 'rare', 'epic', 'legendary'];

function nftImage(chainId: number, contract: string, id: string): string {
  return `https://nft.sandbox.invalid/${chainId}/${contract}/${id}.png`;
}

function nftMetadata(c: ChainState, contract: ContractInfo, id: string): Record<string, unknown> {
  const h = hash3(c.key, parseInt(contract.address.slice(2, 10), 16), Number(id));
  return {
    name: `${contract.name} #${id}`,
    description: `Token ${id} of ${contract.name} on ${c.spec.name} (sandbox data).`,
    image_url: nftImage(c.chainId, contract.address, id),
    attributes: [
      { trait_type: 'Background', value: TRAITS[h % TRAITS.length] },
      { trait_type: 'Rarity', value: RARITY[(h >>> 8) % RARITY.length] },
      { trait_type: 'Level', value: 1 + ((h >>> 16) % 50) },
    ],
  };
}
