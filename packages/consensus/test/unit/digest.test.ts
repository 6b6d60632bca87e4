import { expect } from 'chai';
import { multiSignatureMessage, toHex } from '@quire/common';
import { batchDigest, decodeDiscarded, encodeDiscarded } from '@quire/consensus';

describe('batch digest and multi-signature value', () => {
  it('matches the batch digest vectors of consensus.md §3.4; an empty batch hashes its ledger (docs/consensus-deviations.md §8)', () => {
    expect(
      batchDigest(
        2,
        1700440100,
        ['622090e57217add1e70edbe01a022736254690b08b71281b001df064a2511217', '97bf7ae91698fc5c5fddb6cbebd1fffeeb7475696c70a0b6e51b6424eca70cee'],
        1,
      ),
    ).to.equal('b967f53c75c725de6ceb3a1ee6174265d74411ba163d46303b3c7eefc5235bf3');
    // consensus.md §3.4 gives 8d206ecb… for the empty batch "0,1700440100": the ledger is now hashed too
    expect(batchDigest(0, 1700440100, [], 1)).to.equal('6997d75cc00c9e336d0045d47ee4d0bc0abb87cf226f685d67346245775add92');
    expect(batchDigest(0, 1700440100, [], 2)).to.equal('630c1dc15d4a64e8ff7555bc8023a0a1648f3a102c80716cfc3a535f5c8dc5b3');
  });

  it('encodes the signed value as the 216-byte golden vector of consensus.md §3.7', () => {
    const bytes = multiSignatureMessage({
      ledger_id: 1,
      pool_state_root_hash: '7siDH8Qanh82UviK4zjBSfLXcoCvLaeGkrByi1ow9Tsm',
      state_root_hash: '8AasPY2KBtPLiVnvePAZhPZKAfRozAR9CBUYAXFBhdXo',
      timestamp: 1691520806,
      txn_root_hash: 'DxX9E3XxEPHbb3JjakcmSduPc2bBcWsFhZZGp5aa842q',
    });
    expect(bytes.length).to.equal(216);
    expect(toHex(bytes)).to.equal(
      '85a96c65646765725f696401b4706f6f6c5f73746174655f726f6f745f68617368d92c37736944483851616e6838325576694b347a6a4253664c58636f43764c6165476b72427969316f773954736daf73746174655f726f6f745f68617368d92c384161735059324b4274504c69566e766550415a68505a4b4166526f7a41523943425559415846426864586fa974696d657374616d70ce64d28f26ad74786e5f726f6f745f68617368d92c44785839453358784550486262334a6a616b636d536475506332624263577346685a5a477035616138343271',
    );
  });

  it('round-trips discarded index lists as canonical JSON', () => {
    expect(encodeDiscarded([])).to.equal('[]');
    expect(encodeDiscarded([1, 3])).to.equal('[1,3]');
    expect(decodeDiscarded('[1,3]')).to.deep.equal([1, 3]);
  });
});
