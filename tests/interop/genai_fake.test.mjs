// The official @google/genai SDK against tests/fake_gemini: proves the fake speaks Google's wire
// format (and so that what GeminiClient is tested against is the real shape).
import {test, before, after, beforeEach} from 'node:test';
import assert from 'node:assert/strict';
import {inflateSync} from 'node:zlib';
import {GoogleGenAI, ApiError} from '@google/genai';
import {startFakeGemini} from '../support/fake_gemini_process.mjs';

const MODEL = 'gemini-3.1-flash-lite-image';
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
let fake;
let baseUrl;
let control;

function pngSize(buf) {
  assert.ok(buf.subarray(0, 8).equals(PNG_MAGIC), 'not a PNG');
  return {width: buf.readUInt32BE(16), height: buf.readUInt32BE(20)};
}

// RGB of the top-left pixel of an 8-bit RGB/RGBA PNG. For the first row every PNG filter leaves the
// first pixel's bytes unchanged, so inflating the IDAT data is enough.
function firstPixel(buf) {
  pngSize(buf);
  const colorType = buf[25];
  assert.ok(buf[24] === 8 && (colorType === 2 || colorType === 6), 'unexpected PNG format');
  const idat = [];
  for (let off = 8; off < buf.length;) {
    const len = buf.readUInt32BE(off);
    const type = buf.toString('latin1', off + 4, off + 8);
    if (type === 'IDAT') idat.push(buf.subarray(off + 8, off + 8 + len));
    off += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  return [raw[1], raw[2], raw[3]];
}

function client(apiVersion = 'v1beta', extra = {}) {
  return new GoogleGenAI({apiKey: 'test', httpOptions: {baseUrl, apiVersion, ...extra}});
}

function imageOf(response) {
  const parts = response.candidates?.[0]?.content?.parts ?? [];
  const images = parts.filter((p) => p.inlineData && !p.thought);
  assert.ok(images.length > 0, 'no image part: ' + JSON.stringify(response).slice(0, 400));
  return images.at(-1).inlineData;
}

before(async () => {
  fake = await startFakeGemini();
  ({baseUrl, control} = fake);
});

after(async () => {
  await fake?.stop();
});

beforeEach(async () => {
  await control('reset', {});
});

test('generateContent returns a PNG image with the requested aspect ratio', async () => {
  const r = await client().models.generateContent({
    model: MODEL,
    contents: 'solid red',
    config: {responseModalities: ['TEXT', 'IMAGE'], imageConfig: {aspectRatio: '16:9'}},
  });
  const image = imageOf(r);
  assert.equal(image.mimeType, 'image/png');
  assert.deepEqual(pngSize(Buffer.from(image.data, 'base64')), {width: 1344, height: 768});
  assert.equal(r.modelVersion, MODEL);
  assert.ok(r.responseId);
  assert.ok(r.usageMetadata.totalTokenCount > 0);
  const [logged] = await control('requests');
  assert.equal(logged.path, `/v1beta/models/${MODEL}:generateContent`);
  assert.equal(logged.api_key_source, 'header');
  assert.equal(logged.body.generationConfig.imageConfig.aspectRatio, '16:9');
});

test('an edit with inlineData really applies (red inverted is cyan)', async () => {
  const ai = client();
  const red = imageOf(await ai.models.generateContent({model: MODEL, contents: 'solid red'}));
  const r = await ai.models.generateContent({
    model: MODEL,
    contents: [{role: 'user', parts: [{text: 'invert'}, {inlineData: red}]}],
  });
  const cyan = imageOf(r);
  assert.equal(cyan.mimeType, 'image/png');
  assert.deepEqual(firstPixel(Buffer.from(red.data, 'base64')), [255, 0, 0]);
  assert.deepEqual(firstPixel(Buffer.from(cyan.data, 'base64')), [0, 255, 255]);
  const log = await control('requests');
  assert.equal(log[1].images[0].sniffed_mime_type, 'image/png');
  assert.equal(log[1].images[0].declared_mime_type, 'image/png');
});

test('apiVersion v1 is served too', async () => {
  const r = await client('v1').models.generateContent({model: MODEL, contents: 'solid blue'});
  imageOf(r);
  const [logged] = await control('requests');
  assert.equal(logged.api_version, 'v1');
});

test('scripted 503, 503 then success with SDK retryOptions', async () => {
  await control('script', [{status: 503}, {status: 503}]);
  const ai = client('v1beta', {retryOptions: {attempts: 3, initialDelay: 0.01, maxDelay: 0.05}});
  const r = await ai.models.generateContent({model: MODEL, contents: 'solid green'});
  imageOf(r);
  const log = await control('requests');
  assert.deepEqual(log.map((e) => e.response_status), [503, 503, 200]);
});

test('API errors surface as ApiError with the HTTP status', async () => {
  await control('script', [{status: 429, retry_delay: '2s'}]);
  await assert.rejects(
      client().models.generateContent({model: MODEL, contents: 'solid red'}),
      (e) => e instanceof ApiError && e.status === 429 && /RESOURCE_EXHAUSTED/.test(e.message) &&
          /retryDelay/.test(e.message));
  await assert.rejects(
      client().models.generateContent({model: 'gemini-0-nope', contents: 'x'}),
      (e) => e instanceof ApiError && e.status === 404);
  const bad = new GoogleGenAI({apiKey: 'bad-key', httpOptions: {baseUrl, apiVersion: 'v1beta'}});
  await assert.rejects(bad.models.generateContent({model: MODEL, contents: 'x'}),
                       (e) => e instanceof ApiError && e.status === 400 &&
                           /API_KEY_INVALID/.test(e.message));
});

test('safety blocks look like Gemini\'s', async () => {
  await control('script', [
    {block_reason: 'SAFETY'},
    {finish_reason: 'IMAGE_SAFETY', finish_message: 'Unable to show the generated image.'},
  ]);
  const ai = client();
  const blocked = await ai.models.generateContent({model: MODEL, contents: 'x'});
  assert.equal(blocked.promptFeedback.blockReason, 'SAFETY');
  assert.equal(blocked.candidates, undefined);
  const refused = await ai.models.generateContent({model: MODEL, contents: 'x'});
  assert.equal(refused.candidates[0].finishReason, 'IMAGE_SAFETY');
});

test('thought parts and signatures are passed through; a chat second turn edits', async () => {
  await control('script', [{thought_parts: 2}]);
  const chat = client().chats.create({model: MODEL});
  const first = await chat.sendMessage({message: 'solid red'});
  const parts = first.candidates[0].content.parts;
  assert.equal(parts.filter((p) => p.thought).length, 2);
  assert.ok(parts.filter((p) => !p.thought).every((p) => p.thoughtSignature));
  const second = await chat.sendMessage({message: 'invert'});
  imageOf(second);
  const log = await control('requests');
  assert.equal(log[1].body.contents.length, 3);
  assert.equal(log[1].response_status, 200);
});

test('streamGenerateContent over SSE delivers the image', async () => {
  const stream = await client().models.generateContentStream({model: MODEL, contents: 'solid red'});
  let image;
  for await (const chunk of stream) {
    const parts = chunk.candidates?.[0]?.content?.parts ?? [];
    image = parts.find((p) => p.inlineData)?.inlineData ?? image;
  }
  assert.ok(image);
  pngSize(Buffer.from(image.data, 'base64'));
});

const FLASH = 'gemini-3.1-flash-image';

test('image size, the extreme ratios, thinking and search grounding, as the SDK sends them', async () => {
  const r = await client().models.generateContent({
    model: FLASH,
    contents: 'solid navy',
    config: {
      responseModalities: ['TEXT', 'IMAGE'],
      imageConfig: {aspectRatio: '1:8', imageSize: '512'},
      thinkingConfig: {thinkingLevel: 'HIGH'},
      tools: [{googleSearch: {}}],
    },
  });
  assert.deepEqual(pngSize(Buffer.from(imageOf(r).data, 'base64')), {width: 192, height: 1536});
  const parts = r.candidates[0].content.parts;
  assert.ok(parts[0].thought, 'HIGH thinking starts with a thought part');
  const chunks = r.candidates[0].groundingMetadata.groundingChunks;
  assert.equal(chunks.length, 2);
  assert.ok(chunks.every((c) => c.web.uri.startsWith('https://') && c.web.title));
  assert.deepEqual(r.candidates[0].groundingMetadata.webSearchQueries, ['solid navy']);
  assert.ok(r.usageMetadata.thoughtsTokenCount > 0);
  const [logged] = await control('requests');
  assert.deepEqual(logged.body.generationConfig.imageConfig, {aspectRatio: '1:8', imageSize: '512'});
  assert.deepEqual(logged.body.generationConfig.thinkingConfig, {thinkingLevel: 'HIGH'});
  assert.deepEqual(logged.body.tools, [{googleSearch: {}}]);
  assert.equal(logged.response_status, 200);
});

test('what a model does not offer is a 400 INVALID_ARGUMENT ApiError', async () => {
  const cases = [
    [MODEL, {imageConfig: {imageSize: '2K'}}, /Unsupported image size "2K" for model/],
    [MODEL, {imageConfig: {aspectRatio: '8:1'}}, /Unsupported aspect ratio "8:1" for model/],
    [MODEL, {tools: [{googleSearch: {}}]}, /Search Grounding is not supported/],
    ['gemini-3-pro-image', {imageConfig: {imageSize: '512'}}, /Unsupported image size "512"/],
    ['gemini-2.5-flash-image', {thinkingConfig: {thinkingLevel: 'MINIMAL'}},
      /Thinking level is not supported/],
  ];
  for (const [model, config, message] of cases) {
    await assert.rejects(
        client().models.generateContent({model, contents: 'solid red', config}),
        (e) => e instanceof ApiError && e.status === 400 &&
            JSON.parse(e.message).error.status === 'INVALID_ARGUMENT' &&
            message.test(JSON.parse(e.message).error.message),
        `${model} ${JSON.stringify(config)}`);
  }
  const log = await control('requests');
  assert.deepEqual(log.map((e) => e.response_status), [400, 400, 400, 400, 400]);
});

test('a 3.1 Flash Image chat replays signed parts the fake verifies; an altered replay is refused',
    async () => {
      const chat = client().chats.create({model: FLASH, config: {imageConfig: {imageSize: '512'}}});
      const first = await chat.sendMessage({message: 'solid red'});
      const second = await chat.sendMessage({message: 'invert'});
      assert.deepEqual(firstPixel(Buffer.from(imageOf(second).data, 'base64')), [0, 255, 255]);
      let log = await control('requests');
      assert.equal(log[1].response_status, 200);
      assert.equal(log[1].turns[1].role, 'model');
      assert.equal(log[1].turns[1].signatures, 2, 'the text and the image part verified');

      // The same history with the model's image swapped for the second answer's: refused.
      const answer = structuredClone(first.candidates[0].content);
      const image = answer.parts.find((p) => p.inlineData && !p.thought);
      image.inlineData.data = imageOf(second).data;
      await assert.rejects(
          client().models.generateContent({
            model: FLASH,
            contents: [{role: 'user', parts: [{text: 'solid red'}]}, answer,
              {role: 'user', parts: [{text: 'invert'}]}],
          }),
          (e) => e instanceof ApiError && e.status === 400 &&
              /Image part is missing a thought_signature in content position 2/.test(e.message));
      log = await control('requests');
      assert.equal(log[2].signature_problem, 'altered');
    });
