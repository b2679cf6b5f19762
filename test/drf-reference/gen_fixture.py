#!/usr/bin/python3
"""Deterministic snapshot fixture (snapshot format v1, docs/reference/file-formats.md) for the DRF reference.

Usage: /usr/bin/python3 test/drf-reference/gen_fixture.py [OUT]   (default: stdout)

No randomness, no clock: the same file every run. It deliberately contains
the things the differential comparison should exercise:

* 'en' with 57 items: several items share a backdate (pk tie-break), items
  linked to several companies (union de-duplication), items with no company,
  a company id 0 and a large company id, non-ASCII text (accents, CJK, emoji),
  U+2028/U+2029 in a title (DRF's JSONRenderer escapes these two), '<' '&'
  and quotes, nested objects with their own key order, unknown extra fields
  that must never be served;
* 'es' with 3 items, 'pt-br' with 12 items (a region-style segment),
  'fr' present but empty.
"""
import json
import sys

FIELDS_NOTE = "16 served fields + companies + unknown extras"


def item(pk, backdate, companies, *, kind='article', translated=True, title=None,
         abstract='', image=None, languages=(), stories=(), lang='en', extra=None):
    is_story = kind == 'story'
    slug = 'item-%d' % pk
    out = {
        # deliberately NOT in the served order, to prove the server re-orders
        'companies': list(companies),
        'backdate': backdate,
        'pk': pk,
        'translated_title': title if title is not None else ('%s number %d' % ('Story' if is_story else 'Article', pk)),
        'is_translated': translated,
        'translated_languages': [
            {'language_code': code, 'language': name, 'url': '/%s/latest-news/%s-%s/' % (code, slug, code)}
            for code, name in languages
        ],
        'translated_abstract': abstract,
        'display_image': image,
        'series': None,
        'company_response_summary': {'responses': 0, 'non_responses': 0},
        'company_response_responded': None,
        'responded_to_article': None,
        'translated_url': '/%s/latest-news/%s/' % (lang, slug),
        'stories': [dict(s) for s in stories],
        'story_item_count': None,
        'content_type_display': 'Story' if is_story else 'Article',
        'untranslated_content_type': 'storypage' if is_story else 'articlepage',
    }
    if extra:
        out.update(extra)
    return out


def build():
    en = []
    # 40 regular items over 20 distinct dates (2 items per date -> pk tie-break matters)
    for i in range(40):
        pk = 1000 + (i * 37) % 997          # pks not monotonic with dates
        day = 1 + (i // 2)                  # 2024-03-01 .. 2024-03-20
        companies = []
        if i % 2 == 0:
            companies.append(7)
        if i % 3 == 0:
            companies.append(12)
        if i % 5 == 0:
            companies.append(3)
        image = None
        if i % 4 == 1:
            image = {'url': 'https://cdn.example.org/images/%d.jpg' % pk, 'width': 800 + i, 'height': 450}
        stories = ()
        if i % 6 == 0:
            stories = ({'translated_title': 'Story about supply chains', 'translated_url': '/en/stories/supply-chains/'},)
        en.append(item(pk, '2024-03-%02d' % day, companies, image=image, stories=stories,
                       abstract=('"Quoted abstract %d"' % pk) if i % 7 == 0 else ''))

    # items with special text / structure
    en.append(item(5, '2023-12-31', [7, 12, 12], title='Caf\u00e9 workers \u2014 d\u00e9j\u00e0 vu \u5de5\u4eba \U0001F600',
                   translated=False, languages=[('es', 'Espa\u00f1ol'), ('fr', 'Fran\u00e7ais')],
                   abstract='Acci\u00f3n sindical en la f\u00e1brica', lang='en',
                   extra={'translated_url': '/en/latest-news/caf\u00e9-workers-d\u00e9j\u00e0-vu/'}))
    en.append(item(6, '2023-12-31', [7], title='Line\u2028separator and paragraph\u2029separator',
                   abstract='Tags <b>&amp;</b> "quotes" \\ backslash \t tab'))
    en.append(item(8, '2023-12-31', [0], kind='story', title='Company zero story',
                   stories=[{'translated_title': 'Self', 'translated_url': '/fr/stories/self/'}]))
    en.append(item(9, '2025-01-15', [], title='No company at all (newest item)'))
    en.append(item(10, '2025-01-15', [123456789012], title='Large company id'))
    en.append(item(11, '2024-02-29', [7, 3], kind='story', title='Leap day story',
                   image={'height': 10, 'url': 'https://cdn.example.org/images/11.png', 'width': 20}))
    en.append(item(12, '2024-02-29', [3], title='Extra fields must not be served',
                   extra={'internal_note': 'secret', 'score': 1.5, 'tags': ['x']}))
    # a block of 10 items with one backdate, to stress pk desc tie-break over page boundaries
    for k in range(10):
        en.append(item(200 + k * 3, '2022-06-01', [7, 12] if k % 2 else [12], kind='story' if k % 3 == 0 else 'article'))

    es = [
        item(501, '2024-05-01', [7], translated=True, lang='es', title='Trabajadores de la confecci\u00f3n'),
        item(502, '2024-05-02', [12], translated=True, lang='es', title='Miner\u00eda'),
        item(503, '2024-05-02', [], translated=False, lang='es', title='English original',
             languages=[('en', 'English')]),
    ]
    pt_br = [item(700 + k, '2021-01-%02d' % (k + 1), [7] if k % 2 else [], lang='pt-br') for k in range(12)]

    return {
        'generated_at': '2026-11-20T09:30:00Z',
        'languages': {'en': en, 'es': es, 'pt-br': pt_br, 'fr': []},
    }


def main(argv):
    text = json.dumps(build(), ensure_ascii=False, indent=1) + '\n'
    if len(argv) > 1:
        with open(argv[1], 'w', encoding='utf-8') as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)


if __name__ == '__main__':
    main(sys.argv)
